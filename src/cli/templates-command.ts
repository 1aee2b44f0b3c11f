import { Command, Option } from 'commander';
import { loadConfig } from '../engine/config.js';
import type { TemplateInfo } from '../plugins/render/templates.js';
import { fail } from './fail.js';
import { columns } from './subcommands.js';

/** One template as text: its name and description, then a row per merge field (a field without a default is needed). */
const describe = (template: TemplateInfo): string =>
  [
    `${template.name}: ${template.description || '(no description)'}`,
    ...columns(
      ['  MERGE FIELD', 'KIND', 'DEFAULT'],
      template.merge.map((field) => [`  ${field.name}`, field.kind, field.default ?? '(required)']),
    ).split('\n'),
  ].join('\n');

/** `mediaflow templates`: the render templates a `--template` may name, as GET /templates/ lists them. */
export function templatesCommand(): Command {
  return new Command()
    .summary('List the render templates here (what `render --template` takes), with their merge fields')
    .description(
      'List the templates of `mediaflow render --template NAME` (the templates folder: MEDIAFLOW_TEMPLATES, or the ' +
        'templates/ mediaflow ships), each with its description and its merge fields: the kind of value each takes ' +
        '(text, url, number) and its default; a field without one must be given with --merge NAME=value. A server ' +
        'answers the same list at GET /templates/ (docs/render.md#templates).\n\n' +
        'Examples:\n' +
        '  mediaflow templates\n' +
        '  mediaflow templates --json\n' +
        '  mediaflow render --template quote-card --merge QUOTE="Less is more." --merge AUTHOR="Mies"',
    )
    .addOption(new Option('--json', 'print the list as JSON ({"templates": [...]}, as GET /templates/)'))
    .action(async (flags: { json?: boolean }) => {
      try {
        // The render plugin's template reader loads for this command only, not for every command line.
        const { listTemplates } = await import('../plugins/render/templates.js');
        const templates = listTemplates(loadConfig(process.env).templatesDir);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify({ templates }, null, 2)}\n`);
          return;
        }
        if (templates.length === 0) process.stderr.write('mediaflow: no templates (MEDIAFLOW_TEMPLATES)\n');
        else process.stdout.write(`${templates.map(describe).join('\n\n')}\n`);
      } catch (error) {
        fail(error);
      }
    });
}
