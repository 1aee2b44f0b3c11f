import assert from 'node:assert/strict';
import { builtinRegistry } from '../../src/plugins/index.js';
import { parsePipeline, PipelineDefinitionError } from '../../src/pipelines/definition.js';

const registry = builtinRegistry();

/** The problems a definition (as the file `p.yaml`) has with the built-in operations, one a line, or [] if valid. */
export function definitionProblems(text: string): string[] {
  try {
    parsePipeline(text, 'p.yaml', registry);
    return [];
  } catch (error) {
    assert.ok(error instanceof PipelineDefinitionError, String(error));
    assert.equal(error.status, 400);
    return error.message.split('\n');
  }
}
