import { run } from './main.ts';

void run();
