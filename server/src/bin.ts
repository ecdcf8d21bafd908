#!/usr/bin/env node
import { runCli } from './cli.ts';

runCli(process.argv.slice(2));
