/**
 * Stateful model-quality scenarios, after forge's: ids carried from one result into the next
 * call among distractor tools, an alphanumeric id with a look-alike decoy record, a
 * three-link chain (patient, records, medication) with a decoy patient, and travel tools that
 * must stay untouched by an unrelated question. A wrong id finds a different record or none,
 * silently, and validation checks which records the tools really served.
 */
import { z } from "zod";
import { defineTool, Workflow, type AnyToolDef } from "../../src/core/index.js";
import { scenario, type EvalScenario } from "../scenario.js";
import { planOracle, Seen, type PlanStep } from "./oracle-kit.js";
import { answered, fieldOf, mentionsAll, mentionsAny, noTextReplyYet, wrongPath } from "./stateful-og-kit.js";

// ── tool_selection_stateful: users and permissions among distractors ──────

const USERS: Record<string, { name: string; role: string; team: string; userId: string }> = {
  alice: { name: "Alice", role: "Engineer", team: "Platform", userId: "U-1001" },
  // The decoy: a second user whose id gives a different, shorter permission list.
  bob: { name: "Bob", role: "Manager", team: "Infrastructure", userId: "U-1002" },
};
const PERMISSIONS: Record<string, string[]> = { "U-1001": ["read", "write", "admin"], "U-1002": ["read"] };

interface PermissionState {
  /** Key of the user the last successful lookup found. */
  lookedUp: string | undefined;
  /** The permission list the last successful permissions query returned. */
  permissionsFetched: string[] | undefined;
}

/** A tool the question never needs; it answers like the real thing would, and changes nothing. */
function distractor(name: string, description: string, param: string, paramDescription: string, reply: string): AnyToolDef {
  return defineTool({ name, description, parameters: z.object({ [param]: z.string().describe(paramDescription) }), execute: () => reply });
}

function permissionsWorkflow(): { workflow: Workflow; state: PermissionState } {
  const state: PermissionState = { lookedUp: undefined, permissionsFetched: undefined };
  const lookup = defineTool({
    name: "lookup_user",
    description: "Find a user by name: role, team and user id.",
    parameters: z.object({ name: z.string().describe("The user's name") }),
    execute: ({ name }) => {
      const key = name.trim().toLowerCase();
      const u = USERS[key];
      if (!u) return `No user named "${name}".`;
      state.lookedUp = key;
      return `User: ${u.name}\nRole: ${u.role}\nTeam: ${u.team}\nUser ID: ${u.userId}`;
    },
  });
  const permissions = defineTool({
    name: "get_permissions",
    description: "Permissions of a user, by user id.",
    parameters: z.object({ user_id: z.string().describe("The user's id") }),
    execute: ({ user_id }) => {
      const perms = PERMISSIONS[user_id.trim()];
      if (!perms) return `No permissions on record for "${user_id}".`;
      state.permissionsFetched = [...perms];
      return `User ID: ${user_id.trim()}\nPermissions: ${perms.join(", ")}\nRepository: forge-dev`;
    },
  });
  const respond = defineTool({
    name: "respond",
    description: "Give the user the final answer.",
    parameters: z.object({ answer: z.string().describe("The final answer") }),
    execute: ({ answer }) => answer,
  });
  const workflow = new Workflow({
    name: "tool_selection_stateful",
    tools: {
      search_web: distractor("search_web", "Search the web.", "query", "What to search for", "No results."),
      read_file: distractor("read_file", "Read a file from disk.", "path", "Path of the file", "File not found."),
      list_directory: distractor("list_directory", "List the entries of a directory.", "path", "Path of the directory", "The directory is empty."),
      run_command: distractor("run_command", "Run a shell command.", "cmd", "The command line", "Permission denied."),
      send_email: distractor("send_email", "Send an email.", "to", "Address of the recipient", "Email sent."),
      lookup_user: lookup,
      get_permissions: permissions,
      respond,
    },
    requiredSteps: ["lookup_user", "get_permissions"],
    terminalTool: "respond",
    systemPromptTemplate: "You are an administration assistant. Find the user first, then query their permissions by user id, then respond.",
  });
  return { workflow, state };
}

const permissionsAnswer: PlanStep = {
  tool: "respond",
  args: (s) => ({
    answer: `${fieldOf(s, "lookup_user", "User")} (${fieldOf(s, "get_permissions", "User ID")}) has these permissions on ${fieldOf(s, "get_permissions", "Repository")}: ${fieldOf(s, "get_permissions", "Permissions")}.`,
  }),
};
const lookupAlice: PlanStep = { tool: "lookup_user", args: () => ({ name: "Alice" }) };

export const toolSelectionStateful: EvalScenario = scenario<PermissionState>({
  name: "tool_selection_stateful",
  description: "Pick the two right tools among eight and carry the user id from the lookup into the permissions query.",
  tags: ["stateful", "model_quality"],
  userInput: "Which permissions does Alice have?",
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: permissionsWorkflow,
  validate: ({ args, state }) =>
    mentionsAll(args.answer, ["read", "write", "admin"]) && state.lookedUp !== undefined && state.permissionsFetched?.join(",") === "read,write,admin",
  oracle: planOracle([lookupAlice, { tool: "get_permissions", args: (s) => ({ user_id: fieldOf(s, "lookup_user", "User ID") }) }, permissionsAnswer]),
  slips: [
    // Queries permissions by name, not by the id it was given: nothing on record, and it says so.
    wrongPath("name_as_user_id", 0.03, [
      lookupAlice,
      { tool: "get_permissions", args: () => ({ user_id: "alice" }) },
      { tool: "respond", args: () => ({ answer: "Alice has no permissions on record." }) },
    ]),
    wrongPath("decoy_user", 0.01, [
      { tool: "lookup_user", args: () => ({ name: "Bob" }) },
      { tool: "get_permissions", args: (s) => ({ user_id: fieldOf(s, "lookup_user", "User ID") }) },
      permissionsAnswer,
    ]),
    {
      // A detour through a distractor first: harmless, one round trip wasted.
      name: "detours_through_search",
      rate: 0.05,
      when: (v) => !new Seen(v.results).tried("search_web"),
      step: () => ({ tool: "search_web", args: { query: "Alice permissions" } }),
    },
  ],
});

// ── argument_fidelity_stateful: entity ids with a look-alike decoy ────────

const ENTITIES: Record<string, { entityId: string; status: string; owner: string }> = {
  "widget pro": { entityId: "ENT-4728", status: "active", owner: "alice@example.com" },
  // The decoy: a look-alike product with its own id and figures.
  "widget basic": { entityId: "ENT-3301", status: "retired", owner: "bob@example.com" },
};
const ENTITY_DETAILS: Record<string, { name: string; created: string; unitsSold: number }> = {
  "ENT-4728": { name: "Widget Pro", created: "2024-01-15", unitsSold: 1500 },
  "ENT-3301": { name: "Widget Basic", created: "2022-06-01", unitsSold: 800 },
};

interface EntityState {
  /** Key of the entity the last successful lookup found. */
  lookedUp: string | undefined;
  /** Name of the entity whose details the last successful fetch returned. */
  fetchedName: string | undefined;
}

function entityWorkflow(): { workflow: Workflow; state: EntityState } {
  const state: EntityState = { lookedUp: undefined, fetchedName: undefined };
  const lookup = defineTool({
    name: "lookup_entity",
    description: "Find an entity by name: its entity id, status and owner.",
    parameters: z.object({ entity: z.string().describe("Name of the entity") }),
    execute: ({ entity }) => {
      const key = entity.trim().toLowerCase();
      const e = ENTITIES[key];
      if (!e) return `No entity named "${entity}".`;
      state.lookedUp = key;
      return `Entity ID: ${e.entityId}\nStatus: ${e.status}\nOwner: ${e.owner}`;
    },
  });
  const details = defineTool({
    name: "fetch_details",
    description: "Details of an entity, by entity id.",
    parameters: z.object({ entity_id: z.string().describe("The entity's id") }),
    execute: ({ entity_id }) => {
      const d = ENTITY_DETAILS[entity_id.trim()];
      if (!d) return `No entity with id "${entity_id}".`;
      state.fetchedName = d.name;
      return `Name: ${d.name}\nCreated: ${d.created}\nUnits sold: ${d.unitsSold}`;
    },
  });
  const present = defineTool({
    name: "present",
    description: "Present the final summary to the user.",
    parameters: z.object({ summary: z.string().describe("The summary to present") }),
    execute: ({ summary }) => summary,
  });
  const workflow = new Workflow({
    name: "argument_fidelity_stateful",
    tools: { lookup_entity: lookup, fetch_details: details, present },
    requiredSteps: ["lookup_entity", "fetch_details"],
    terminalTool: "present",
    systemPromptTemplate: "You look entities up. Find the entity, fetch its details with the entity id the lookup gave, then present a summary.",
  });
  return { workflow, state };
}

const entitySummary: PlanStep = {
  tool: "present",
  args: (s) => ({
    summary:
      `${fieldOf(s, "fetch_details", "Name")} (${fieldOf(s, "lookup_entity", "Entity ID")}, ${fieldOf(s, "lookup_entity", "Status")}): ` +
      `created ${fieldOf(s, "fetch_details", "Created")}, ${fieldOf(s, "fetch_details", "Units sold")} units sold.`,
  }),
};
const lookupWidgetPro: PlanStep = { tool: "lookup_entity", args: () => ({ entity: "Widget Pro" }) };

export const argumentFidelityStateful: EvalScenario = scenario<EntityState>({
  name: "argument_fidelity_stateful",
  description: "Carry an alphanumeric id (ENT-4728) exactly from the lookup into the details fetch; a look-alike record is on file.",
  tags: ["stateful", "model_quality"],
  userInput: "Find the entity called 'Widget Pro' and fetch its details.",
  idealIterations: 3,
  maxIterations: 15,
  budgetTokens: 8192,
  build: entityWorkflow,
  validate: ({ args, state }) => mentionsAll(args.summary, ["widget pro", "1500"]) && state.lookedUp !== undefined && state.fetchedName === "Widget Pro",
  oracle: planOracle([lookupWidgetPro, { tool: "fetch_details", args: (s) => ({ entity_id: fieldOf(s, "lookup_entity", "Entity ID") }) }, entitySummary]),
  slips: [
    wrongPath("decoy_entity", 0.01, [
      { tool: "lookup_entity", args: () => ({ entity: "Widget Basic" }) },
      { tool: "fetch_details", args: (s) => ({ entity_id: fieldOf(s, "lookup_entity", "Entity ID") }) },
      entitySummary,
    ]),
    // Drops the id's prefix: no such entity, and a summary without the figures.
    wrongPath("id_without_prefix", 0.01, [
      lookupWidgetPro,
      { tool: "fetch_details", args: () => ({ entity_id: "4728" }) },
      { tool: "present", args: () => ({ summary: "Widget Pro (ENT-4728) is active; no further details were found." }) },
    ]),
  ],
});

// ── sequential_reasoning_stateful: patient, records, interactions ─────────

const PATIENTS: Record<string, string> = { "john doe": "PT-7829", "jane smith": "PT-4215" };
const PATIENT_FILES: Record<string, { born: string; bloodType: string; lastVisit: string; diagnosis: string; medication: string }> = {
  "PT-7829": { born: "1985-03-14", bloodType: "O+", lastVisit: "2024-11-02", diagnosis: "hypertension", medication: "lisinopril 10mg" },
  // The decoy patient: another medication, hence other interactions.
  "PT-4215": { born: "1990-07-22", bloodType: "A-", lastVisit: "2024-10-18", diagnosis: "type 2 diabetes", medication: "metformin 500mg" },
};
const INTERACTIONS: Record<string, string> = {
  lisinopril: "with ibuprofen, risk of kidney damage; with potassium supplements, risk of hyperkalemia",
  metformin: "with alcohol, risk of lactic acidosis; with contrast dye, risk of kidney injury",
};

interface MedicalState {
  identified: string | undefined;
  recordsFetched: string | undefined;
  /** The drug (first word of the medication) whose interactions were last served. */
  interactionsChecked: string | undefined;
}

function medicalWorkflow(): { workflow: Workflow; state: MedicalState } {
  const state: MedicalState = { identified: undefined, recordsFetched: undefined, interactionsChecked: undefined };
  const identify = defineTool({
    name: "identify_patient",
    description: "Find a patient by full name: patient id, date of birth, blood type.",
    parameters: z.object({ name: z.string().describe("The patient's full name") }),
    execute: ({ name }) => {
      const id = PATIENTS[name.trim().toLowerCase()];
      if (!id) return `No patient named "${name}".`;
      state.identified = id;
      const f = PATIENT_FILES[id]!;
      return `Patient ID: ${id}\nBorn: ${f.born}\nBlood type: ${f.bloodType}`;
    },
  });
  const records = defineTool({
    name: "get_records",
    description: "Medical records of a patient, by patient id: last visit, diagnosis, current medication.",
    parameters: z.object({ patient_id: z.string().describe("The patient's id") }),
    execute: ({ patient_id }) => {
      const f = PATIENT_FILES[patient_id.trim()];
      if (!f) return `No records for patient id "${patient_id}".`;
      state.recordsFetched = patient_id.trim();
      return `Last visit: ${f.lastVisit}\nDiagnosis: ${f.diagnosis}\nMedication: ${f.medication}`;
    },
  });
  const interactions = defineTool({
    name: "check_interactions",
    description: "Known interactions of a medication with other drugs.",
    parameters: z.object({ medication: z.string().describe("Name of the medication") }),
    execute: ({ medication }) => {
      // Forgiving like a real drug database: "lisinopril 10mg" and "Lisinopril" are the same drug.
      const drug = medication.trim().toLowerCase().split(/\s+/)[0] ?? "";
      const found = INTERACTIONS[drug];
      if (!found) return `No interaction data for "${medication}".`;
      state.interactionsChecked = drug;
      return `Drug: ${drug}\nInteractions: ${found}`;
    },
  });
  const recommend = defineTool({
    name: "recommend",
    description: "Give the recommendation for a patient, based on the findings.",
    parameters: z.object({
      patient_id: z.string().describe("The patient's id"),
      findings: z.string().describe("The findings the recommendation rests on"),
    }),
    execute: ({ findings }) => findings,
  });
  const workflow = new Workflow({
    name: "sequential_reasoning_stateful",
    tools: { identify_patient: identify, get_records: records, check_interactions: interactions, recommend },
    requiredSteps: ["identify_patient", "get_records", "check_interactions"],
    terminalTool: "recommend",
    systemPromptTemplate:
      "You assist clinicians. Identify the patient, read their records, check the interactions of their current medication, then recommend.",
  });
  return { workflow, state };
}

const medicalSteps = (name: string): PlanStep[] => [
  { tool: "identify_patient", args: () => ({ name }) },
  { tool: "get_records", args: (s) => ({ patient_id: fieldOf(s, "identify_patient", "Patient ID") }) },
  { tool: "check_interactions", args: (s) => ({ medication: fieldOf(s, "get_records", "Medication") }) },
  {
    tool: "recommend",
    args: (s) => ({
      patient_id: fieldOf(s, "identify_patient", "Patient ID"),
      findings: `Current medication ${fieldOf(s, "get_records", "Medication")} (for ${fieldOf(s, "get_records", "Diagnosis")}). Interactions: ${fieldOf(s, "check_interactions", "Interactions")}.`,
    }),
  },
];

export const sequentialReasoningStateful: EvalScenario = scenario<MedicalState>({
  name: "sequential_reasoning_stateful",
  description: "A three-link chain (name to patient id, id to medication, medication to interactions) with a decoy patient on file.",
  tags: ["stateful", "model_quality"],
  userInput: "What interactions should we watch for with John Doe's current medication?",
  idealIterations: 4,
  maxIterations: 15,
  budgetTokens: 8192,
  build: medicalWorkflow,
  validate: ({ args, state }) =>
    mentionsAll(args.findings, ["lisinopril"]) &&
    mentionsAny(args.findings, ["kidney", "ibuprofen"]) &&
    mentionsAny(args.findings, ["hyperkalemia", "potassium"]) &&
    state.identified === "PT-7829" &&
    state.recordsFetched === "PT-7829" &&
    state.interactionsChecked === "lisinopril",
  oracle: planOracle(medicalSteps("John Doe")),
  slips: [
    {
      // Recommends from the records alone: the step nudge sends it to the interaction check.
      name: "recommends_before_interactions",
      rate: 0.95,
      when: (v) => answered(v, "get_records") && !new Seen(v.results).tried("check_interactions") && !new Seen(v.results).tried("recommend"),
      step: (v) => {
        const s = new Seen(v.results);
        return {
          tool: "recommend",
          args: { patient_id: fieldOf(s, "identify_patient", "Patient ID"), findings: `On ${fieldOf(s, "get_records", "Medication")}; no concerns noted.` },
        };
      },
    },
    // Checks the diagnosis instead of the drug: no interaction data, and a recommendation without any.
    wrongPath("checks_the_diagnosis", 0.01, [
      ...medicalSteps("John Doe").slice(0, 2),
      { tool: "check_interactions", args: (s) => ({ medication: fieldOf(s, "get_records", "Diagnosis") }) },
      { tool: "recommend", args: (s) => ({ patient_id: fieldOf(s, "identify_patient", "Patient ID"), findings: `On ${fieldOf(s, "get_records", "Medication")}; no interaction data found.` }) },
    ]),
    wrongPath("decoy_patient", 0.01, medicalSteps("Jane Smith")),
  ],
});

// ── relevance_detection_stateful: travel tools that must stay untouched ───

interface TravelState {
  forecasts: string[];
  flights: { origin: string; destination: string }[];
  hotelChecks: string[];
  conversions: { amount: string; from: string; to: string }[];
}

function travelWorkflow(): { workflow: Workflow; state: TravelState } {
  const state: TravelState = { forecasts: [], flights: [], hotelChecks: [], conversions: [] };
  const forecast = defineTool({
    name: "get_forecast",
    description: "Weather forecast for a city.",
    parameters: z.object({ city: z.string().describe("The city") }),
    execute: ({ city }) => {
      state.forecasts.push(city.trim().toLowerCase());
      return `Forecast for ${city}: 22°C, partly cloudy.`;
    },
  });
  const flight = defineTool({
    name: "book_flight",
    description: "Book a flight from one city to another.",
    parameters: z.object({ origin: z.string().describe("City of departure"), destination: z.string().describe("City of arrival") }),
    execute: ({ origin, destination }) => {
      state.flights.push({ origin: origin.trim().toLowerCase(), destination: destination.trim().toLowerCase() });
      return `Booked a flight from ${origin} to ${destination}.`;
    },
  });
  const hotel = defineTool({
    name: "check_hotel",
    description: "Hotel availability in a city for a check-in date.",
    parameters: z.object({ city: z.string().describe("The city"), checkin: z.string().describe("Check-in date") }),
    execute: ({ city, checkin }) => {
      state.hotelChecks.push(city.trim().toLowerCase());
      return `3 hotels have rooms in ${city} from ${checkin}.`;
    },
  });
  const convert = defineTool({
    name: "convert_currency",
    description: "Convert an amount from one currency to another.",
    parameters: z.object({
      amount: z.string().describe("The amount to convert"),
      from_currency: z.string().describe("Currency code to convert from"),
      to_currency: z.string().describe("Currency code to convert to"),
    }),
    execute: ({ amount, from_currency, to_currency }) => {
      state.conversions.push({ amount, from: from_currency.toUpperCase(), to: to_currency.toUpperCase() });
      return `${amount} ${from_currency} is 0.00 ${to_currency}.`;
    },
  });
  const decline = defineTool({
    name: "decline",
    description: "Use this when no available tool fits the user's request.",
    parameters: z.object({ reason: z.string().describe("Why none of the tools fits, briefly") }),
    execute: ({ reason }) => reason,
  });
  const workflow = new Workflow({
    name: "relevance_detection_stateful",
    tools: { get_forecast: forecast, book_flight: flight, check_hotel: hotel, convert_currency: convert, decline },
    terminalTool: "decline",
    systemPromptTemplate:
      "You are an assistant with travel tools. Call a tool only when it directly serves the request; when none does, call decline and say why.",
  });
  return { workflow, state };
}

const untouched = (s: TravelState): boolean => s.forecasts.length + s.flights.length + s.hotelChecks.length + s.conversions.length === 0;

export const relevanceDetectionStateful: EvalScenario = scenario<TravelState>({
  name: "relevance_detection_stateful",
  description: "An unrelated question must be declined with no travel tool touched: the travel state must stay empty.",
  tags: ["stateful", "model_quality"],
  userInput: "What's the square root of 144?",
  idealIterations: 1,
  maxIterations: 5,
  budgetTokens: 8192,
  build: travelWorkflow,
  validate: ({ tool, args, state }) => tool === "decline" && typeof args.reason === "string" && args.reason.trim() !== "" && untouched(state),
  oracle: planOracle([{ tool: "decline", args: () => ({ reason: "This is arithmetic; none of the travel tools can answer it." }) }]),
  slips: [
    {
      // Just answers the arithmetic in prose: the retry nudge asks for a tool call; without one the run has no answer.
      name: "answers_in_text",
      rate: 0.95,
      when: (v) => noTextReplyYet(v) && v.results.length === 0,
      step: () => ({ text: "The square root of 144 is 12." }),
    },
    {
      // Reaches for a tool anyway, then declines: the conversion is on record.
      name: "tries_a_travel_tool",
      rate: 0.02,
      when: (v) => !new Seen(v.results).tried("convert_currency"),
      step: () => ({ tool: "convert_currency", args: { amount: "144", from_currency: "USD", to_currency: "USD" } }),
    },
  ],
});

export const STATEFUL_OG_QUALITY: EvalScenario[] = [toolSelectionStateful, argumentFidelityStateful, sequentialReasoningStateful, relevanceDetectionStateful];
