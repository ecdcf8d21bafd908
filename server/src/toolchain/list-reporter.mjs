// With `playwright test --list`, writes every test of every runner project to PROCTOR_LIST_OUTPUT:
// the runner id, project, file (relative to rootDir, as --test-list wants it, and to the config's
// folder, as the inventory keeps it) and title path.
import fs from 'node:fs';
import path from 'node:path';

const posix = (file) => file.split(path.sep).join('/');

export default class ListReporter {
  onBegin(config, suite) {
    const configDir = config.configFile ? path.dirname(config.configFile) : config.rootDir;
    const tests = suite.allTests().map((test) => {
      const [, project, , ...titles] = test.titlePath();
      return {
        id: test.id,
        project,
        title: test.title,
        file: posix(path.relative(config.rootDir, test.location.file)),
        file_path: posix(path.relative(configDir, test.location.file)),
        titles,
        suites: titles.slice(0, -1),
        tags: [...test.tags],
        line: test.location.line,
        column: test.location.column,
      };
    });
    fs.writeFileSync(process.env.PROCTOR_LIST_OUTPUT, JSON.stringify({ projects: config.projects.map((p) => p.name), tests }));
  }

  printsToStdio() {
    return false;
  }
}
