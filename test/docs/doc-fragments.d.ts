/**
 * What a doc fragment (`<!-- ts-check: fragment -->` before its fence) may use without declaring
 * it: the values the docs' prose introduces ("a runner", "a workflow", "a store"). Global, so a
 * fragment's own imports and declarations shadow these. Only test/docs/code-blocks.test.ts
 * compiles this file; the project's tsconfig excludes it (it would leak these globals into src).
 */
/* eslint-disable no-var */
declare var client: import("forge-ts").LLMClient;
declare var contextManager: import("forge-ts").ContextManager;
declare var workflow: import("forge-ts").Workflow;
declare var runner: import("forge-ts").WorkflowRunner;
declare var store: import("forge-ts").RunStore;
declare var answer: import("forge-ts").AnyToolDef;
declare var search: import("forge-ts").AnyToolDef;
declare var report: import("forge-ts").AnyToolDef;
declare var get_weather: import("forge-ts").AnyToolDef;
declare var respond: import("forge-ts").AnyToolDef;
declare var userText: string;
declare var messages: import("openai").OpenAI.ChatCompletionMessageParam[];
declare var tools: import("openai").OpenAI.ChatCompletionTool[];
