/**
 * The two tools of the small model's task, one zod schema each (the type, the client-side check
 * and the JSON Schema the caller sends), and implementations that log every execution so a test
 * can say each tool ran exactly once, with which arguments. Results are strings so that every
 * client forwards them to the model unchanged.
 */
import { z } from "zod";

export const getWeatherParams = z.object({ city: z.string().describe("City name") });
export const convertTemperatureParams = z.object({
  celsius: z.number().describe("Temperature in °C"),
  to: z.enum(["fahrenheit", "kelvin"]).describe("Target unit"),
});

export type ToolName = "get_weather" | "convert_temperature";

export const TOOL_DESCRIPTIONS: Record<ToolName, string> = {
  get_weather: "Current temperature in a city, in °C",
  convert_temperature: "Convert a temperature from °C",
};

/** JSON Schemas for the clients that take them raw (openai, @anthropic-ai/sdk). */
export const TOOL_SCHEMAS = {
  get_weather: z.toJSONSchema(getWeatherParams),
  convert_temperature: z.toJSONSchema(convertTemperatureParams),
} as const;

export const WEATHER_RESULT = JSON.stringify({ city: "Oslo", celsius: 21 });
export const CONVERSION_RESULT = JSON.stringify({ fahrenheit: 69.8 });

export interface Execution {
  name: ToolName;
  args: unknown;
}

export interface WeatherTools {
  /** Run one tool as the client's executor would; unknown names throw. */
  run(name: string, args: unknown): string;
  /** Every execution so far, in order. */
  readonly executions: readonly Execution[];
}

/**
 * A fresh log per test.
 *
 * @example
 * const tools = weatherTools();
 * tools.run("get_weather", { city: "Oslo" }); // '{"city":"Oslo","celsius":21}'
 */
export function weatherTools(): WeatherTools {
  const executions: Execution[] = [];
  return {
    executions,
    run(name, args) {
      if (name === "get_weather") {
        executions.push({ name, args: getWeatherParams.parse(args) });
        return WEATHER_RESULT;
      }
      if (name === "convert_temperature") {
        const { celsius, to } = convertTemperatureParams.parse(args);
        executions.push({ name, args: { celsius, to } });
        return to === "fahrenheit" ? JSON.stringify({ fahrenheit: Math.round(celsius * 18 + 320) / 10 }) : JSON.stringify({ kelvin: celsius + 273.15 });
      }
      throw new Error(`the client tried to run an unknown tool "${name}"`);
    },
  };
}
