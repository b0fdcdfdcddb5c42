/**
 * `grounded_synthesis`, of forge's advanced_reasoning family: a hiring decision where the
 * candidates every other tool praises are ruled out by one line in a compatibility check or a
 * team-fit note. The stateful pair files the decision with a per-run backend that records which
 * checks were really read.
 */
import { z } from "zod";
import { defineTool, ToolResolutionError, Workflow } from "../../src/core/index.js";
import { scenario, type EvalScenario, type OracleView, type Slip } from "../scenario.js";
import { planOracle, Seen } from "./oracle-kit.js";


// ── grounded_synthesis: data ────────────────────────────────────────────────────────────────

const OPEN_ROLE = [
  "Role: Senior Backend Engineer, Payments Platform (a senior individual-contributor seat).",
  "Requirements:",
  "  - at least 5 years of production Python",
  "  - a distributed-systems background",
  "  - payment-processing experience, strongly preferred: the team is building merchant integrations in the style of Stripe Connect",
  "Timing: the hire is for the Q3 product launch; the new senior engineer has to be in seat and up to speed well before the launch sprint starts.",
].join("\n");

interface Candidate {
  brief: string;
  skills: string;
  compatibility: string;
  team: string;
}

/**
 * Five candidates. Sarah and James top every skill measure but are blocked by their
 * compatibility checks (a non-compete, a visa sponsorship the team has no slot for); Diana
 * passes compatibility but her team-fit note says she wants a lead role this IC seat is not;
 * Marcus is eligible but has no payments background; Aisha is eligible and has it.
 */
const CANDIDATES: Readonly<Record<string, Candidate>> = {
  "Sarah Chen": {
    brief: "8 years of Python; formerly Senior Engineer at Stripe; a leader in the payments domain",
    skills:
      "Skills: Sarah Chen. 8 years; Python, Go, PostgreSQL, Redis. Payments: built the webhook reliability layer of Stripe Connect " +
      "and the idempotency middleware of Stripe Subscriptions. Technical interview: top decile (98th percentile). Four payment-routing " +
      "systems in production. Led a team of four at Stripe and brought two junior engineers up to mid-level.",
    compatibility:
      "Compatibility: Sarah Chen. Background check clean; references excellent. Legal: her Stripe contract carries a payments-industry " +
      "non-compete covenant that runs until late 2026. Putting her on a payments product before then needs a waiver negotiated with " +
      "Stripe; in comparable cases that has been a long project of its own, and it may not succeed. She could instead join a " +
      "non-payments team (infrastructure or platform), where the covenant does not apply. Pay expectation: senior band.",
    team:
      "Team fit: Sarah Chen with Payments Platform. The team has a clear gap in webhook reliability and idempotency (it buys that from " +
      "a SaaS vendor today), and her Stripe webhook work fills it exactly. Culture fit very strong: peers call her the engineer you want " +
      "around when payment edge cases appear. Ramp-up: about 2 weeks to a first production change.",
  },
  "James Patel": {
    brief: "9 years of Python; formerly infrastructure at DeepMind; a distributed-systems expert",
    skills:
      "Skills: James Patel. 9 years; Python, C++, distributed systems. Designed DeepMind's gradient-aggregation tier and contributed " +
      "to the JAX runtime. Technical interview: top decile (96th percentile). Three large ML training platforms; little direct payments " +
      "work, but very strong distributed-systems instincts. Led an infrastructure team of six.",
    compatibility:
      "Compatibility: James Patel. Background check clean; references excellent. People Ops: he is on F-1 OPT, and working on past his " +
      "current authorization needs us to sponsor an H-1B visa. We sponsor on some engineering tracks, but Payments Platform has no " +
      "sponsorship slot in this hiring cycle; getting one means petitioning the immigration committee, which has been slow and " +
      "uncertain. Pay expectation: senior band.",
    team:
      "Team fit: James Patel with Payments Platform. The team's distributed-systems depth is uneven and he would raise the bar on " +
      "consistency at scale. Systems first, payments second: about 4 to 6 weeks to learn the payments domain. Culture fit very strong: " +
      "references call him a systems thinker who lifts the people around him.",
  },
  "Aisha Nakamura": {
    brief: "7 years of Python; formerly at Square; payments-adjacent backend work",
    skills:
      "Skills: Aisha Nakamura. 7 years; Python, Java, MySQL, Kafka. Payments backend at Square: built the reconciliation pipeline and " +
      "owned merchant payout retries. Technical interview: strong (78th percentile). Two payments-adjacent backend systems. Tech lead " +
      "of a team of three.",
    compatibility:
      "Compatibility: Aisha Nakamura. Background check clean; references solid. People Ops: US citizen, no non-compete or other " +
      "restrictive covenant; standard onboarding paperwork, so she could start as soon as she accepts. Pay expectation: senior band.",
    team:
      "Team fit: Aisha Nakamura with Payments Platform. Brings payments experience from day one; her reconciliation and retry work at " +
      "Square applies directly. Culture fit strong: references call her steady and pragmatic. Ramp-up: 2 to 3 weeks.",
  },
  "Marcus Reyes": {
    brief: "5 years of Python; formerly Adobe Creative Cloud; generalist backend",
    skills:
      "Skills: Marcus Reyes. 5 years; Python, JavaScript, MongoDB. Generalist backend at Adobe: licensing and entitlement APIs for " +
      "Creative Cloud. Technical interview: solid (72nd percentile). One backend system at scale; no payments background. Senior IC " +
      "without management experience.",
    compatibility:
      "Compatibility: Marcus Reyes. Background check clean; references solid. People Ops: US permanent resident, no non-compete or " +
      "restrictive covenant; Adobe's standard IP release is on file. He could start as soon as he accepts. Pay expectation: senior band.",
    team:
      "Team fit: Marcus Reyes with Payments Platform. A generalist senior; the payments learning curve is steep, since licensing and " +
      "entitlements work nothing like payment processing. Culture fit strong: adaptable and curious. Ramp-up: 8 to 12 weeks.",
  },
  "Diana Kim": {
    brief: "10 years of Python; formerly Principal Engineer at Stripe; a payments domain expert",
    skills:
      "Skills: Diana Kim. 10 years; Python, Go, PostgreSQL, gRPC. Principal Engineer at Stripe: led the Stripe Issuing authorization " +
      "service and co-designed the global fraud-scoring pipeline. Technical interview: top decile (99th percentile). Five payments " +
      "systems at scale; several internal engineering-blog posts. Ran Stripe's payments-platform reading group; mentored six senior ICs.",
    compatibility:
      "Compatibility: Diana Kim. Background check clean; references excellent. Legal: she joined Stripe before its current non-compete " +
      "policy and her offer letter has no restrictive covenants. US citizen; standard paperwork, so she could start as soon as she " +
      "accepts. Pay expectation: principal band, though she is open to the senior band for the right role.",
    team:
      "Team fit: Diana Kim with Payments Platform. Technically a strong addition; her Issuing work maps onto our roadmap. But she has " +
      "said plainly that her next move should be into a tech-lead or engineering-management track with direct reports, and several of " +
      "the offers she is weighing are people-management roles. This position is an IC seat with no reports, and the team has no lead " +
      "opening this cycle. The recruiter's read: she would take it only if her lead offers fall through, and would keep looking for a " +
      "lead role afterwards.",
  },
};

const POOL = Object.keys(CANDIDATES);
const PICK = "Aisha Nakamura";

/**
 * The canonical candidate a name means: the full name or a first or last name, in any case.
 *
 * @example resolveCandidate("nakamura") // "Aisha Nakamura"
 */
export function resolveCandidate(name: string): string | undefined {
  const key = name.trim().toLowerCase().replace(/\s+/g, " ");
  if (key === "") return undefined;
  return POOL.find((full) => full.toLowerCase() === key || full.toLowerCase().split(" ").includes(key));
}

function candidateOf(name: string, tool: string): Candidate {
  const canonical = resolveCandidate(name);
  // The name was well-formed and simply matches nobody: a resolution miss, not a tool error.
  if (!canonical) throw new ToolResolutionError(`no candidate matches "${name}"; the pool is ${POOL.join(", ")}`, tool);
  return CANDIDATES[canonical]!;
}

function poolListing(): string {
  return [`Candidate pool, Senior Backend Engineer, Payments Platform (${POOL.length} candidates):`, ...POOL.map((n) => `  - ${n}: ${CANDIDATES[n]!.brief}`)].join("\n");
}

/** Words that show a rationale weighed a blocker: the non-compete, the visa, the lead-role mismatch. */
const BLOCKER_TERMS = [
  "non-compete", "noncompete", "non compete", "covenant", "waiver",
  "visa", "sponsor", "h-1b", "h1b", "f-1", "immigration", "work authorization",
  "tech lead", "tech-lead", "engineering manage", "management track", "people-management", "people management",
  "lead role", "lead position", "lead opening", "direct reports", "ic seat", "ic role", "ic track", "individual contributor",
];
const PASSED_OVER = /\b(sarah|chen|james|patel|diana|kim)\b/;

/**
 * A grounded decision picks Aisha Nakamura and shows the others were weighed: the rationale
 * names a blocker or one of the candidates passed over.
 *
 * @example hiringDecisionValid({ candidate: "Aisha Nakamura", rationale: "Sarah Chen is under a non-compete." }) // true
 * @example hiringDecisionValid({ candidate: "Sarah Chen", rationale: "Top decile." }) // false
 */
export function hiringDecisionValid(args: Record<string, unknown>): boolean {
  const candidate = String(args.candidate ?? "").toLowerCase();
  const rationale = String(args.rationale ?? "").toLowerCase();
  const picked = /\b(aisha|nakamura)\b/.test(candidate);
  return picked && (BLOCKER_TERMS.some((t) => rationale.includes(t)) || PASSED_OVER.test(rationale));
}

const HIRING_PARAMS = {
  none: z.object({}),
  candidate: z.object({ candidate_name: z.string().describe("The candidate's full name") }),
  decision: z.object({ candidate: z.string().describe("The candidate you hire"), rationale: z.string().describe("A short reason for the decision") }),
};

const HIRING_DESCRIPTIONS = {
  get_open_role: "The open role's requirements and constraints.",
  get_candidate_pool: "The candidates under consideration.",
  get_skill_summary: "A candidate's condensed skill assessment.",
  get_compatibility_check: "A candidate's compliance and eligibility check for the open role.",
  get_team_dynamics: "How a candidate would fit the team.",
  submit_hiring_decision: "Record the hiring decision with a short rationale.",
} as const;

const HIRING_SYSTEM_PROMPT = "You are the hiring manager. Evaluate the candidate pool for the open role with the tools available, then submit your decision.";

const HIRING_USER_INPUT =
  "We're hiring a senior backend engineer and have a pool of candidates. Look at the role, assess the candidates, and submit " +
  "your hiring decision with a short rationale: why you chose your candidate and why you passed over the others you considered.";

const HIRING_RATIONALE =
  "Aisha Nakamura: payments backend at Square, eligible, can start at once and ramps in 2-3 weeks. Passed over Sarah Chen " +
  "(a Stripe non-compete runs to late 2026 and needs a waiver), James Patel (needs H-1B sponsorship and the team has no slot), " +
  "Diana Kim (wants a tech-lead or management track; this is an IC seat) and Marcus Reyes (no payments background, 8-12 week ramp).";

function hiringWorkflow(name: string, tools: Workflow["tools"]): Workflow {
  return new Workflow({
    name,
    tools,
    requiredSteps: ["get_candidate_pool", "get_open_role"],
    terminalTool: "submit_hiring_decision",
    systemPromptTemplate: HIRING_SYSTEM_PROMPT,
  });
}

function groundedSynthesisWorkflow(): Workflow {
  const d = HIRING_DESCRIPTIONS;
  const p = HIRING_PARAMS;
  return hiringWorkflow("grounded_synthesis", {
    get_open_role: defineTool({ name: "get_open_role", description: d.get_open_role, parameters: p.none, execute: () => OPEN_ROLE }),
    get_candidate_pool: defineTool({ name: "get_candidate_pool", description: d.get_candidate_pool, parameters: p.none, execute: () => poolListing() }),
    get_skill_summary: defineTool({ name: "get_skill_summary", description: d.get_skill_summary, parameters: p.candidate, execute: ({ candidate_name }) => candidateOf(candidate_name, "get_skill_summary").skills }),
    get_compatibility_check: defineTool({
      name: "get_compatibility_check",
      description: d.get_compatibility_check,
      parameters: p.candidate,
      execute: ({ candidate_name }) => candidateOf(candidate_name, "get_compatibility_check").compatibility,
    }),
    get_team_dynamics: defineTool({ name: "get_team_dynamics", description: d.get_team_dynamics, parameters: p.candidate, execute: ({ candidate_name }) => candidateOf(candidate_name, "get_team_dynamics").team }),
    submit_hiring_decision: defineTool({ name: "submit_hiring_decision", description: d.submit_hiring_decision, parameters: p.decision, execute: ({ candidate }) => `decision recorded: ${candidate}` }),
  });
}

// ── grounded_synthesis: the oracle and its slips ────────────────────────────────────────────

/**
 * The shortest grounded path: the pool, the role, every compatibility check (where two
 * blockers hide), then the team-fit notes of the two still standing out (Diana's blocker
 * hides there), and the decision.
 */
const hiringOracle = planOracle([
  { tool: "get_candidate_pool", args: () => ({}) },
  { tool: "get_open_role", args: () => ({}) },
  ...POOL.map((name) => ({ tool: "get_compatibility_check", args: () => ({ candidate_name: name }) })),
  { tool: "get_team_dynamics", args: () => ({ candidate_name: "Diana Kim" }) },
  { tool: "get_team_dynamics", args: () => ({ candidate_name: PICK }) },
  { tool: "submit_hiring_decision", args: () => ({ candidate: PICK, rationale: HIRING_RATIONALE }) },
]);

function readFor(view: OracleView, tool: string, name: string): boolean {
  return new Seen(view.results).successes(tool).some((r) => resolveCandidate(String(r.args.candidate_name ?? "")) === name);
}

const allCompatibilityRead = (v: OracleView): boolean => POOL.every((n) => readFor(v, "get_compatibility_check", n));

/** Wrong conclusion: every check read, and the model still hires the top scorer over her non-compete. */
function picksTopScorer(rate: number): Slip {
  return {
    name: "picks_top_scorer",
    rate,
    when: allCompatibilityRead,
    step: () => ({
      tool: "submit_hiring_decision",
      args: { candidate: "Sarah Chen", rationale: "Sarah Chen has the strongest payments record in the pool (98th percentile, built Stripe Connect's webhook layer) and ramps in two weeks." },
    }),
  };
}

/** Wrong conclusion: the compatibility checks clear Diana, and the model hires her without reading her team-fit note. */
function overlooksTeamFit(rate: number): Slip {
  return {
    name: "overlooks_team_fit",
    rate,
    when: (v) => allCompatibilityRead(v) && !readFor(v, "get_team_dynamics", "Diana Kim"),
    step: () => ({
      tool: "submit_hiring_decision",
      args: {
        candidate: "Diana Kim",
        rationale: "Diana Kim: 99th percentile, principal-level payments work at Stripe, no restrictive covenants. Sarah Chen has a non-compete and James Patel needs visa sponsorship.",
      },
    }),
  };
}

/**
 * Recoverable: the pool listing alone makes the model decide, before it has read the role.
 * Step enforcement (reforged) blocks the early decision; without it (bare) it stands.
 */
const decidesBeforeReading: Slip = {
  name: "decides_before_reading",
  rate: 0.15,
  when: (v) => {
    const seen = new Seen(v.results);
    return seen.successes("get_candidate_pool").length > 0 && !seen.tried("get_open_role") && !seen.tried("submit_hiring_decision");
  },
  step: () => ({ tool: "submit_hiring_decision", args: { candidate: "Sarah Chen", rationale: "Sarah Chen, ex-Stripe and a payments domain leader, is the obvious fit from the pool." } }),
};

export const groundedSynthesis: EvalScenario = scenario({
  name: "grounded_synthesis",
  description: "Synthesis under lure pressure: hire from a pool where the candidates every tool praises are ruled out by one line elsewhere.",
  tags: ["advanced", "reasoning"],
  userInput: HIRING_USER_INPUT,
  idealIterations: 10,
  maxIterations: 20,
  budgetTokens: 8192,
  build: () => ({ workflow: groundedSynthesisWorkflow(), state: undefined }),
  validate: ({ args }) => hiringDecisionValid(args),
  oracle: hiringOracle,
  slips: [picksTopScorer(0.4), overlooksTeamFit(0.2), decidesBeforeReading],
});

// ── grounded_synthesis_stateful ─────────────────────────────────────────────────────────────

/** The hiring backend of one run: which records were read, and the decisions filed. */
export interface HiringState {
  roleRead: boolean;
  poolRead: boolean;
  skillsRead: Set<string>;
  compatibilityRead: Set<string>;
  teamRead: Set<string>;
  decisions: { candidate: string; rationale: string }[];
}

function hiringBackend(): { workflow: Workflow; state: HiringState } {
  const state: HiringState = { roleRead: false, poolRead: false, skillsRead: new Set(), compatibilityRead: new Set(), teamRead: new Set(), decisions: [] };
  const d = HIRING_DESCRIPTIONS;
  const p = HIRING_PARAMS;
  // Resolve, note the read in `seen`, and hand back the record (a miss throws before anything is noted).
  const read = (name: string, tool: string, seen: Set<string>): Candidate => {
    const record = candidateOf(name, tool);
    seen.add(resolveCandidate(name)!);
    return record;
  };
  const workflow = hiringWorkflow("grounded_synthesis_stateful", {
    get_open_role: defineTool({
      name: "get_open_role",
      description: d.get_open_role,
      parameters: p.none,
      execute: () => {
        state.roleRead = true;
        return OPEN_ROLE;
      },
    }),
    get_candidate_pool: defineTool({
      name: "get_candidate_pool",
      description: d.get_candidate_pool,
      parameters: p.none,
      execute: () => {
        state.poolRead = true;
        return poolListing();
      },
    }),
    get_skill_summary: defineTool({ name: "get_skill_summary", description: d.get_skill_summary, parameters: p.candidate, execute: ({ candidate_name }) => read(candidate_name, "get_skill_summary", state.skillsRead).skills }),
    get_compatibility_check: defineTool({
      name: "get_compatibility_check",
      description: d.get_compatibility_check,
      parameters: p.candidate,
      execute: ({ candidate_name }) => read(candidate_name, "get_compatibility_check", state.compatibilityRead).compatibility,
    }),
    get_team_dynamics: defineTool({ name: "get_team_dynamics", description: d.get_team_dynamics, parameters: p.candidate, execute: ({ candidate_name }) => read(candidate_name, "get_team_dynamics", state.teamRead).team }),
    submit_hiring_decision: defineTool({
      name: "submit_hiring_decision",
      description: d.submit_hiring_decision,
      parameters: p.decision,
      execute: ({ candidate, rationale }) => {
        state.decisions.push({ candidate, rationale });
        return `decision recorded: ${candidate}`;
      },
    }),
  });
  return { workflow, state };
}

/**
 * The decision was informed: the role and pool were read, the two front-runners' compatibility
 * checks (where their blockers are) were opened, and exactly one decision was filed.
 *
 * @example hiringGrounded(state) // false when Sarah Chen's compatibility check was never read
 */
export function hiringGrounded(state: HiringState): boolean {
  return state.roleRead && state.poolRead && state.compatibilityRead.has("Sarah Chen") && state.compatibilityRead.has("James Patel") && state.decisions.length === 1;
}

/**
 * Wrong conclusion the state catches: the model hires the right candidate from the pool
 * listing alone, naming the others it never checked. The words pass; no check was read.
 */
const guessesWithoutChecks: Slip = {
  name: "guesses_without_checks",
  rate: 0.1,
  when: (v) => {
    const seen = new Seen(v.results);
    return seen.successes("get_open_role").length > 0 && !seen.tried("get_compatibility_check") && !seen.tried("get_team_dynamics");
  },
  step: () => ({
    tool: "submit_hiring_decision",
    args: { candidate: PICK, rationale: "Aisha Nakamura's payments work at Square fits the role best; I passed over Sarah Chen and James Patel." },
  }),
};

export const groundedSynthesisStateful: EvalScenario = scenario<HiringState>({
  name: "grounded_synthesis_stateful",
  description: "The hiring decision over a per-run backend: the blockers' compatibility checks must really have been read, and one grounded decision filed.",
  tags: ["stateful", "advanced", "reasoning"],
  userInput: HIRING_USER_INPUT,
  idealIterations: 10,
  maxIterations: 20,
  budgetTokens: 8192,
  build: hiringBackend,
  validate: ({ args, state }) => hiringDecisionValid(args) && hiringGrounded(state),
  oracle: hiringOracle,
  slips: [picksTopScorer(0.35), overlooksTeamFit(0.2), guessesWithoutChecks],
});
