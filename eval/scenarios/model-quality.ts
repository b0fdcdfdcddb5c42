/**
 * Model-quality scenarios as forge's leaderboard runs them: picking the two right tools out of
 * eight, carrying an id from one result into the next call, a four-step chain where each
 * result decides the next call, and declining a question no tool can answer. Tools are
 * fixed-answer functions; validation reads the terminal call's text for the facts the tools
 * returned. The argument-checking variants are in checked.ts.
 */
import { z } from "zod";
import { defineTool, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView } from "../scenario.js";
import { captured, mentionsAll, mentionsAny } from "./answer-text.js";
import { planOracle, Seen, unansweredTurns } from "./oracle-kit.js";

const seen = (view: OracleView) => new Seen(view.results);

function toolSelectionWorkflow(): Workflow {
  const text = z.string();
  const fixed = (name: string, description: string, parameters: Record<string, z.ZodString>, answer: string) =>
    defineTool({ name, description, parameters: z.object(parameters), execute: () => answer });
  return new Workflow({
    name: "tool_selection",
    tools: {
      search_web: fixed("search_web", "Search the internet.", { query: text.describe("What to search for") }, "No results."),
      read_file: fixed("read_file", "Read a file from the local disk.", { path: text.describe("Path of the file") }, "Error: no such file."),
      list_directory: fixed("list_directory", "List what a directory contains.", { path: text.describe("Path of the directory") }, "The directory is empty."),
      run_command: fixed("run_command", "Run a shell command.", { cmd: text.describe("The command line") }, "Permission denied."),
      send_email: fixed("send_email", "Send an email.", { to: text.describe("Address of the recipient") }, "Email sent."),
      lookup_user: fixed("lookup_user", "Find a user by name.", { name: text.describe("The user's name") }, "User Alice: role Engineer, team Platform, user id U-1001."),
      get_permissions: fixed(
        "get_permissions",
        "The permissions of a user, by user id.",
        { user_id: text.describe("The user's id") },
        "Permissions on repository forge-dev: read, write, admin.",
      ),
      respond: defineTool({
        name: "respond",
        description: "Give the user the final answer.",
        parameters: z.object({ answer: text.describe("The answer the user reads") }),
        execute: ({ answer }) => answer,
      }),
    },
    requiredSteps: ["lookup_user", "get_permissions"],
    terminalTool: "respond",
    systemPromptTemplate: "You are an admin assistant with many tools. Find the user, check their permissions, then respond.",
  });
}

export const toolSelection: EvalScenario = scenario({
  name: "tool_selection",
  description: "A crowded toolbox: the two right tools among six distractors, then an answer naming all three permissions.",
  tags: ["model_quality"],
  userInput: "What permissions does Alice have?",
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: toolSelectionWorkflow(), state: undefined }),
  validate: ({ args }) => mentionsAll(args.answer, ["read", "write", "admin"]),
  oracle: planOracle([
    { tool: "lookup_user", args: () => ({ name: "Alice" }) },
    { tool: "get_permissions", args: (s) => ({ user_id: captured(s.text("lookup_user"), /\bU-\d+/) }) },
    { tool: "respond", args: (s) => ({ answer: `Alice has these permissions. ${s.text("get_permissions")}` }) },
  ]),
  slips: [
    {
      // Reaches for the web search first: a wasted call, after which it finds the right tools.
      name: "searches_the_web_first",
      rate: 0.05,
      when: (v) => !seen(v).tried("search_web") && !seen(v).tried("lookup_user"),
      step: () => ({ tool: "search_web", args: { query: "Alice permissions" } }),
    },
    {
      // Reports the everyday permissions and drops admin.
      name: "drops_admin",
      rate: 0.03,
      when: (v) => seen(v).succeeded("get_permissions"),
      step: () => ({ tool: "respond", args: { answer: "Alice can read and write on forge-dev." } }),
    },
  ],
});

/** The only entity id fetch_details knows; anything else gets the not-found warning. */
const ENTITY_ID = "ENT-4728";

function argumentFidelityWorkflow(): Workflow {
  const lookup = defineTool({
    name: "lookup_entity",
    description: "Find an entity by its name.",
    parameters: z.object({ entity: z.string().describe("The entity's name") }),
    execute: () => `Entity ${ENTITY_ID}: status active, owner alice@example.com.`,
  });
  const details = defineTool({
    name: "fetch_details",
    description: "The details of an entity, by entity id.",
    parameters: z.object({ entity_id: z.string().describe("The entity's id") }),
    // Not an error: a wrong id quietly gets a warning, which the model must not present as details.
    execute: ({ entity_id }) =>
      entity_id === ENTITY_ID ? "Widget Pro: created 2024-01-15, 1500 units sold." : `Warning: unknown entity_id "${entity_id}", nothing but defaults to show.`,
  });
  const present = defineTool({
    name: "present",
    description: "Show the user the final summary.",
    parameters: z.object({ summary: z.string().describe("The summary the user reads") }),
    execute: ({ summary }) => summary,
  });
  return new Workflow({
    name: "argument_fidelity",
    tools: { lookup_entity: lookup, fetch_details: details, present },
    requiredSteps: ["lookup_entity", "fetch_details"],
    terminalTool: "present",
    systemPromptTemplate: "You look entities up. Find the entity, fetch its details with the id the lookup gave you, then present a summary.",
  });
}

export const argumentFidelity: EvalScenario = scenario({
  name: "argument_fidelity",
  description: "An id read out of one result and passed to the next call; the summary carries the details it unlocked.",
  tags: ["model_quality"],
  userInput: "Look up the entity 'Widget Pro' and get its details.",
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: argumentFidelityWorkflow(), state: undefined }),
  validate: ({ args }) => mentionsAll(args.summary, ["widget pro", "1500"]),
  oracle: planOracle([
    { tool: "lookup_entity", args: () => ({ entity: "Widget Pro" }) },
    { tool: "fetch_details", args: (s) => ({ entity_id: captured(s.text("lookup_entity"), /\bENT-\d+/) }) },
    { tool: "present", args: (s) => ({ summary: s.text("fetch_details") }) },
  ]),
  slips: [
    {
      // Passes the name it was given instead of the id it was handed, then presents the warning.
      name: "passes_the_name_not_the_id",
      rate: 0.01,
      when: (v) => seen(v).succeeded("lookup_entity"),
      step: (v) =>
        seen(v).tried("fetch_details")
          ? { tool: "present", args: { summary: `Widget Pro: ${seen(v).text("fetch_details")}` } }
          : { tool: "fetch_details", args: { entity_id: "Widget Pro" } },
    },
  ],
});

function sequentialReasoningWorkflow(): Workflow {
  const identify = defineTool({
    name: "identify_patient",
    description: "Find a patient by full name.",
    parameters: z.object({ name: z.string().describe("The patient's full name") }),
    execute: () => "Patient PT-7829: born 1985-03-14, blood type O+.",
  });
  const records = defineTool({
    name: "get_records",
    description: "A patient's medical records, by patient id.",
    parameters: z.object({ patient_id: z.string().describe("The patient's id") }),
    execute: () => "Last visit 2024-11-02. Diagnosis: hypertension. Current medication: lisinopril 10mg.",
  });
  const interactions = defineTool({
    name: "check_interactions",
    description: "Known drug interactions of one medication.",
    parameters: z.object({ medication: z.string().describe("The medication's name") }),
    execute: () => "lisinopril with ibuprofen: risk of kidney damage. lisinopril with potassium supplements: risk of hyperkalemia.",
  });
  const recommend = defineTool({
    name: "recommend",
    description: "Give the recommendation, grounded in the findings.",
    parameters: z.object({
      patient_id: z.string().describe("The patient's id"),
      findings: z.string().describe("The findings the recommendation rests on"),
    }),
    execute: ({ findings }) => findings,
  });
  return new Workflow({
    name: "sequential_reasoning",
    tools: { identify_patient: identify, get_records: records, check_interactions: interactions, recommend },
    requiredSteps: ["identify_patient", "get_records", "check_interactions"],
    terminalTool: "recommend",
    systemPromptTemplate:
      "You assist clinicians. Identify the patient, read their records, check the interactions of the medication they take now, then recommend.",
  });
}

export const sequentialReasoning: EvalScenario = scenario({
  name: "sequential_reasoning",
  description: "A four-step chain where each result names the next call's argument; the findings cite both interactions.",
  tags: ["model_quality"],
  userInput: "Check drug interactions for patient John Doe's current medication.",
  idealIterations: 4,
  maxIterations: 15,
  budgetTokens: 8192,
  build: () => ({ workflow: sequentialReasoningWorkflow(), state: undefined }),
  validate: ({ args }) =>
    mentionsAll(args.findings, ["lisinopril"]) && mentionsAny(args.findings, ["kidney", "ibuprofen"]) && mentionsAny(args.findings, ["hyperkalemia", "potassium"]),
  oracle: planOracle([
    { tool: "identify_patient", args: () => ({ name: "John Doe" }) },
    { tool: "get_records", args: (s) => ({ patient_id: captured(s.text("identify_patient"), /\bPT-\d+/) }) },
    { tool: "check_interactions", args: (s) => ({ medication: captured(s.text("get_records"), /medication: ([a-z]+)/i) }) },
    {
      tool: "recommend",
      args: (s) => ({
        patient_id: captured(s.text("identify_patient"), /\bPT-\d+/),
        findings: `${s.text("get_records")} ${s.text("check_interactions")} Avoid ibuprofen and potassium supplements.`,
      }),
    },
  ]),
  slips: [
    {
      // Recommends as soon as it has read the medication, without checking its interactions:
      // step enforcement sends it back to the check.
      name: "recommends_before_checking",
      rate: 0.97,
      when: (v) => seen(v).succeeded("get_records") && !seen(v).tried("check_interactions") && !seen(v).triedAfter("recommend", "get_records"),
      step: (v) => ({ tool: "recommend", args: { patient_id: "PT-7829", findings: `${seen(v).text("get_records")} Continue the current treatment.` } }),
    },
  ],
});

function relevanceWorkflow(): Workflow {
  const forecast = defineTool({
    name: "get_forecast",
    description: "The weather forecast for a city.",
    parameters: z.object({ city: z.string().describe("The city") }),
    execute: ({ city }) => `${city}: 22°C, partly cloudy.`,
  });
  const flight = defineTool({
    name: "book_flight",
    description: "Book a flight from one city to another.",
    parameters: z.object({ origin: z.string().describe("City of departure"), destination: z.string().describe("City of arrival") }),
    execute: ({ origin, destination }) => `Booked a flight from ${origin} to ${destination}.`,
  });
  const hotel = defineTool({
    name: "check_hotel",
    description: "Hotel availability in a city.",
    parameters: z.object({ city: z.string().describe("The city"), checkin: z.string().describe("Date of check-in") }),
    execute: ({ city }) => `${city}: 3 hotels have rooms.`,
  });
  const currency = defineTool({
    name: "convert_currency",
    description: "Convert an amount of money from one currency to another.",
    parameters: z.object({
      amount: z.string().describe("The amount"),
      from_currency: z.string().describe("Code of the currency converted from"),
      to_currency: z.string().describe("Code of the currency converted to"),
    }),
    execute: ({ amount, from_currency, to_currency }) => `${amount} ${from_currency} is 0.00 ${to_currency}.`,
  });
  const decline = defineTool({
    name: "decline",
    description: "Use this when no tool here fits the request, and say why.",
    parameters: z.object({ reason: z.string().describe("Why none of the tools fits") }),
    execute: ({ reason }) => reason,
  });
  return new Workflow({
    name: "relevance_detection",
    tools: { get_forecast: forecast, book_flight: flight, check_hotel: hotel, convert_currency: currency, decline },
    terminalTool: "decline",
    systemPromptTemplate:
      "You are a travel assistant. Call a tool only when it fits the request; when none of them can help, call decline and say why.",
  });
}

export const relevanceDetection: EvalScenario = scenario({
  name: "relevance_detection",
  description: "Hallucination resistance: a maths question among travel tools must be declined with a reason.",
  tags: ["model_quality"],
  userInput: "What is the square root of 144?",
  idealIterations: 1,
  maxIterations: 5,
  budgetTokens: 8192,
  build: () => ({ workflow: relevanceWorkflow(), state: undefined }),
  validate: ({ args }) => typeof args.reason === "string" && args.reason.trim().length > 0,
  oracle: planOracle([{ tool: "decline", args: () => ({ reason: "Square roots are maths; these tools only do weather, flights, hotels and currencies." }) }]),
  slips: [
    {
      // Answers the question itself in prose instead of declining through the tool: only a
      // retry nudge turns that into the decline call.
      name: "answers_it_itself",
      rate: 0.97,
      when: (v) => unansweredTurns(v) === 0 && !seen(v).tried("decline"),
      step: () => ({ text: "The square root of 144 is 12." }),
    },
  ],
});

export const MODEL_QUALITY: EvalScenario[] = [toolSelection, argumentFidelity, sequentialReasoning, relevanceDetection];
