import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { serverProcess, type ServerProcess } from './process.ts';

// Several hosts on one machine, as an operator deploys them on several: each host is a network
// namespace with one interface on a bridge of the test's own, so that a host can be cut from the
// network (its link down) while its processes live on, and nothing it serves is on loopback.
// The test's own process stays in the root namespace and reaches every host through the bridge.

/** Whether this machine lets the tests make namespaces: root, `ip` and a kernel that allows it. */
export const canMakeNamespaces: boolean = (() => {
  if (process.getuid?.() !== 0 || process.platform !== 'linux') return false;
  const name = `proctor-probe-${crypto.randomBytes(3).toString('hex')}`;
  const made = spawnSync('ip', ['netns', 'add', name], { stdio: 'ignore' }).status === 0;
  if (made) spawnSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
  return made;
})();

export interface Host {
  name: string;
  /** The namespace's name, for `ip netns exec`. */
  namespace: string;
  address: string;
  /** A long-lived process on this host, in its own process group (killed whole by `kill`). */
  spawn(command: string, args: string[], env?: Record<string, string>): HostProcess;
  /** A command on this host, to its end; its output, or a throw naming it. */
  run(command: string, args: string[]): string;
  /** The host dies: every process in its namespace is killed at once. */
  die(): void;
  /** Cut the host from the network (its link down), and bring it back. */
  unplug(): void;
  plug(): void;
}

export interface HostProcess extends ServerProcess {
  /** Signal the whole process group: the process and every child it started. */
  kill(signal: NodeJS.Signals): void;
}

export interface Network {
  /** The bridge's own address: where the hosts reach the test's process. */
  gateway: string;
  host(name: string): Host;
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

/** A bridge and its subnet (10.x.y.0/24, picked at random so that parallel tests do not meet). */
export function createNetwork(): Network {
  const id = crypto.randomBytes(3).toString('hex');
  const subnet = `10.${100 + crypto.randomInt(100)}.${crypto.randomInt(256)}`;
  const bridge = `prb${id}`;
  const gateway = `${subnet}.1`;
  ip('link', 'add', bridge, 'type', 'bridge');
  ip('addr', 'add', `${gateway}/24`, 'dev', bridge);
  ip('link', 'set', bridge, 'up');
  const hosts: Host[] = [];
  const processes: HostProcess[] = [];

  const host = (name: string): Host => {
    const index = hosts.length + 2;
    const namespace = `proctor-${id}-${name}`;
    const veth = `prv${id}${index}`;
    const address = `${subnet}.${index}`;
    ip('netns', 'add', namespace);
    ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', namespace);
    ip('link', 'set', veth, 'master', bridge);
    ip('link', 'set', veth, 'up');
    ip('-n', namespace, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    ip('-n', namespace, 'link', 'set', 'lo', 'up');
    ip('-n', namespace, 'link', 'set', 'eth0', 'up');
    const made: Host = {
      name,
      namespace,
      address,
      spawn: (command, args, env = {}) => {
        const child = spawn('ip', ['netns', 'exec', namespace, command, ...args], {
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
        const started = serverProcess(child);
        const running: HostProcess = {
          ...started,
          kill: (signal) => {
            try {
              if (child.pid) process.kill(-child.pid, signal);
            } catch {
              // already gone
            }
          },
        };
        processes.push(running);
        return running;
      },
      run: (command, args) => execFileSync('ip', ['netns', 'exec', namespace, command, ...args], { stdio: 'pipe' }).toString(),
      die: () => {
        const pids = spawnSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8' }).stdout.split(/\s+/).filter(Boolean);
        for (const pid of pids) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // gone already
          }
        }
      },
      unplug: () => ip('-n', namespace, 'link', 'set', 'eth0', 'down'),
      plug: () => {
        ip('-n', namespace, 'link', 'set', 'eth0', 'up');
        // The route goes with the link: a host brought back is reachable again at once.
        spawnSync('ip', ['-n', namespace, 'route', 'replace', `${subnet}.0/24`, 'dev', 'eth0'], { stdio: 'ignore' });
      },
    };
    hosts.push(made);
    return made;
  };

  return {
    gateway,
    host,
    destroy: () => {
      for (const running of processes) running.kill('SIGKILL');
      for (const made of hosts) spawnSync('ip', ['netns', 'del', made.namespace], { stdio: 'ignore' });
      spawnSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
    },
  };
}
