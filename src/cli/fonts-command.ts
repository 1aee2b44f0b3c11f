import { Command, Option } from 'commander';
import { installedFonts } from '../engine/subtitles/fonts.js';

/** `mediaflow fonts`: the font families a caption `font` may name, as GET /fonts lists them. */
export function fontsCommand(): Command {
  return new Command()
    .summary('List the font families installed here (the values of a caption `font`)')
    .description(
      'List the font families installed on this machine, as fontconfig knows them: ' +
        'the values the `font` field of add-subtitles ' +
        'and generate-subtitles takes. A server answers the same list at GET /fonts.\n\n' +
        'Examples:\n' +
        '  mediaflow fonts\n' +
        '  mediaflow fonts --json',
    )
    .addOption(new Option('--json', 'print the list as JSON ({"fonts": [...]}, as GET /fonts)'))
    .action((flags: { json?: boolean }) => {
      const fonts = installedFonts();
      process.stdout.write(
        flags.json ? `${JSON.stringify({ fonts }, null, 2)}\n` : fonts.map((font) => `${font}\n`).join(''),
      );
    });
}
