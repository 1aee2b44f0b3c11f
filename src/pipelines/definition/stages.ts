/** The order of a pipeline's steps: stages of steps that may run at the same time, each using only earlier ones. */

/** Orders steps in stages, each after the steps it uses; `cycle` is there when some steps wait on each other. */
export function orderSteps(steps: Array<{ name: string; after: string[] }>): { stages: string[][]; cycle?: string[] } {
  const pending = new Map(steps.map((step) => [step.name, new Set(step.after)]));
  const stages: string[][] = [];
  while (pending.size > 0) {
    const ready = [...pending.entries()]
      .filter(([, after]) => [...after].every((dep) => !pending.has(dep)))
      .map(([name]) => name);
    if (ready.length === 0) break;
    for (const name of ready) pending.delete(name);
    stages.push(ready);
  }
  return pending.size > 0 ? { stages, cycle: findCycle(pending) } : { stages };
}

/** One cycle among steps that could not be ordered, as a path that ends where it starts. */
function findCycle(pending: Map<string, Set<string>>): string[] {
  const start = [...pending.keys()][0]!;
  const pathIndex = new Map<string, number>();
  const path: string[] = [];
  let current = start;
  // Every pending step waits on another pending step, so walking those edges must loop.
  while (!pathIndex.has(current)) {
    pathIndex.set(current, path.length);
    path.push(current);
    current = [...pending.get(current)!].find((dep) => pending.has(dep))!;
  }
  return [...path.slice(pathIndex.get(current)!), current];
}
