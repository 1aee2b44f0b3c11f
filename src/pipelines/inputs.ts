import { paramError, shortened } from '../engine/errors.js';
import { asText, NUMBER, splitList } from '../engine/plugins/params.js';
import type { PipelineDefinition, PipelineInput } from './definition.js';

/** A pipeline input's value once read: text, a number, or a list of URLs/paths. */
export type InputValue = string | number | string[];

function coerce(input: PipelineInput, raw: unknown): InputValue {
  switch (input.type) {
    case 'integer': {
      const text = typeof raw === 'number' ? String(raw) : (asText(raw) ?? '').trim();
      if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
        throw paramError(`Expected input \`${input.name}\` to be an integer, got \`${shortened(asText(raw) ?? '')}\``);
      }
      return Number(text);
    }
    case 'number': {
      const text = typeof raw === 'number' ? String(raw) : (asText(raw) ?? '').trim();
      if (!NUMBER.test(text) || !Number.isFinite(Number(text))) {
        throw paramError(`Expected input \`${input.name}\` to be a number, got \`${shortened(asText(raw) ?? '')}\``);
      }
      return Number(text);
    }
    case 'urls': {
      const items = Array.isArray(raw)
        ? raw.flatMap((item) => splitList(asText(item) ?? ''))
        : splitList(asText(raw) ?? '');
      if (items.length === 0) throw paramError(`Expected input \`${input.name}\` to list at least one URL`);
      return items;
    }
    case 'url':
      return (asText(raw) ?? '').trim();
    case 'string':
      return asText(raw) ?? '';
  }
}

/**
 * Reads a run's input values by the pipeline's declared types: defaults fill the gaps, a missing
 * input without one is a 400, and so is a value of the wrong type. Unknown names are ignored
 * (form fields, extra CSV columns), unless `unknown` says to refuse them.
 */
export function readInputs(
  definition: PipelineDefinition,
  raw: Record<string, unknown>,
  options: { refuseUnknown?: boolean } = {},
): Record<string, InputValue> {
  if (options.refuseUnknown) {
    const declared = new Set(definition.inputs.map((input) => input.name));
    const unknown = Object.keys(raw).filter((key) => !declared.has(key));
    if (unknown.length > 0) {
      throw paramError(
        `Unknown input${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `\`${k}\``).join(', ')} of ` +
          `pipeline '${definition.name}' (inputs: ${[...declared].join(', ') || 'none'})`,
      );
    }
  }
  const values: Record<string, InputValue> = {};
  for (const input of definition.inputs) {
    const given = raw[input.name];
    const text = asText(given);
    if (text === undefined || text.trim() === '') {
      if (input.default === undefined)
        throw paramError(`Missing required input \`${input.name}\` of pipeline '${definition.name}'`);
      values[input.name] = coerce(input, input.default);
      continue;
    }
    values[input.name] = coerce(input, given);
  }
  return values;
}
