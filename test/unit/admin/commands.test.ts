import { describe, expect, it } from 'vitest';
import { runAdmin, usageText } from '#admin/cli';
import type { AdminCommand } from '#admin/command';
import { ADMIN_COMMANDS } from '#admin/commands';

const LOCAL_ENV = { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9', AWS_REGION: 'local' };

/** A command of another module, as a helper adds one: an entry of its own, nothing else. */
const echo: AdminCommand = {
  name: 'echo-table',
  options: ['text'],
  usage: ['echo-table --text <text>                          says it back'],
  run: async ({ need, table }) => ({ said: need('text'), table: table('sessions') }),
};

describe('the table of admin commands', () => {
  it('names every command once, each with usage lines that start with its name', () => {
    const names = ADMIN_COMMANDS.map((command) => command.name);
    expect(new Set(names).size).toBe(names.length);
    for (const command of ADMIN_COMMANDS) expect(command.usage[0]?.startsWith(`${command.name}`)).toBe(true);
  });

  it('prints the usage text from the table, one line per usage line, in the table’s order', () => {
    const lines = usageText().split('\n');
    const listed = ADMIN_COMMANDS.flatMap((command) => command.usage.map((line) => `  ${line}`));
    const first = lines.indexOf(listed[0] as string);
    expect(lines.slice(first, first + listed.length)).toEqual(listed);
  });

  it('runs a command appended to the table, with its own options and the usage line it brings', async () => {
    const commands = [...ADMIN_COMMANDS, echo];
    await expect(runAdmin(['echo-table', '--text', 'hi'], LOCAL_ENV, commands)).resolves.toEqual({
      said: 'hi',
      table: 'embed-sessions',
    });
    expect(usageText(commands)).toContain(`  ${echo.usage[0]}`);
  });

  it('refuses an option the command does not take, and a required one left out, naming the command', async () => {
    const commands = [...ADMIN_COMMANDS, echo];
    await expect(runAdmin(['echo-table', '--board', 'b'], LOCAL_ENV, commands)).rejects.toThrow(
      /^echo-table: Unknown option '--board'/,
    );
    await expect(runAdmin(['echo-table'], LOCAL_ENV, commands)).rejects.toThrow('echo-table needs --text');
    await expect(runAdmin(['list-boards', '--user', 'u'], LOCAL_ENV)).rejects.toThrow(
      /^list-boards: Unknown option '--user'/,
    );
  });

  it('refuses an unknown command and a missing one', async () => {
    await expect(runAdmin(['no-such'], LOCAL_ENV)).rejects.toThrow('Unknown command "no-such"');
    await expect(runAdmin([], LOCAL_ENV)).rejects.toThrow('No command given');
  });
});
