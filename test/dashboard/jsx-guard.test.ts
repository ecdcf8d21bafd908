import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/playwright.ts';

// The lint rule proctor/trusted-html (eslint-trusted-html.js) over the dashboard's components: no
// escaping by hand, and markup put in as it is only under a comment saying why it is safe.

const eslint = new ESLint({ cwd: ROOT });

async function problems(code: string, file = 'server/src/dashboard/example-page.tsx'): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${file}` });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'proctor/trusted-html').map((m) => `${m.line}: ${m.message.split(':')[0]}`);
}

describe('the trusted-html lint rule', () => {
  it('when a component escapes by hand, then each import and call of escapeXml is an error', async () => {
    const code = `import { escapeXml } from '../xml.ts';\nexport const Name = (props: { name: string }) => <b>{escapeXml(props.name)}</b>;\n`;
    expect(await problems(code)).toEqual(['1: escapeXml in a component', '2: escapeXml in a component']);
  });

  it('when raw markup has no reason above it, then dangerouslySetInnerHTML and Trusted are errors; with one, they pass', async () => {
    const bare = [
      "import { Trusted } from './components/html.ts';",
      'export const A = (props: { html: string }) => <div dangerouslySetInnerHTML={{ __html: props.html }} />;',
      'export const B = (props: { html: string }) => <Trusted html={props.html} />;',
      '// trusted: short',
      'export const C = (props: { html: string }) => <Trusted html={props.html} />;',
    ].join('\n');
    expect(await problems(bare)).toEqual([
      '2: dangerouslySetInnerHTML puts markup in as it is',
      '3: Trusted puts markup in as it is',
      '5: Trusted puts markup in as it is',
    ]);
    const reasoned = [
      "import { Trusted } from './components/html.ts';",
      '// trusted: the chart module escapes every value it draws.',
      'export const A = (props: { html: string }) => <div dangerouslySetInnerHTML={{ __html: props.html }} />;',
      'export const B = (props: { html: string }) => (',
      '  <p>',
      '    {/* trusted: the chart module escapes every value it draws. */}',
      '    <Trusted html={props.html} />',
      '  </p>',
      ');',
    ].join('\n');
    expect(await problems(reasoned)).toEqual([]);
  });

  it('when a string module of the dashboard puts markup in through Trusted, then it needs the reason too; escapeXml stays allowed there', async () => {
    const code = [
      "import { h } from 'preact';",
      "import { escapeXml } from '../xml.ts';",
      "import { Trusted } from './components/html.ts';",
      'export const page = (body: string) => [escapeXml(body), h(Trusted, { html: body })];',
    ].join('\n');
    expect(await problems(code, 'server/src/dashboard/example-page.ts')).toEqual(['4: Trusted puts markup in as it is']);
  });

  it('when a component lives outside the dashboard (the run report of runs/), then it is held to the rule too', async () => {
    const code = [
      "import { escapeXml } from '../xml.ts';",
      'export const A = (props: { html: string }) => <style dangerouslySetInnerHTML={{ __html: escapeXml(props.html) }} />;',
    ].join('\n');
    expect(await problems(code, 'server/src/runs/example.tsx')).toEqual([
      '1: escapeXml in a component',
      '2: dangerouslySetInnerHTML puts markup in as it is',
      '2: escapeXml in a component',
    ]);
  });

  it("when the dashboard's own files and the other components are linted, then none breaks the rule", async () => {
    const results = await eslint.lintFiles(['server/src/dashboard/**/*.tsx', 'server/src/dashboard/**/*.ts', 'server/src/**/*.tsx']);
    const broken = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'proctor/trusted-html').map((m) => `${r.filePath}:${m.line}`));
    expect(results.filter((r) => r.filePath.endsWith('.tsx')).length).toBeGreaterThanOrEqual(11);
    expect(broken).toEqual([]);
  });
});
