import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chargeCel } from '../evaluation-limits.js';

/**
 * cel-js has no evaluation budget, and its comprehensions (all, exists, map, filter…) are where
 * an expression's cost multiplies: three nested ones over a 400-element list are 64 million
 * steps. Every iteration of every comprehension goes through the iteration scope's
 * `setIterValue`, so charging one unit there meters them all, exactly and for the price of an
 * increment. The scope class is internal to cel-js: it is reached through the module the package
 * itself loads (same URL, same instance), and the meter's tests fail if a release moves it.
 */
type IterationScope = { setIterValue(value: unknown, evaluator: unknown): unknown };

const celEntry = createRequire(import.meta.url).resolve('@marcbachmann/cel-js');
const registry = (await import(pathToFileURL(join(dirname(celEntry), 'registry.js')).href)) as {
  RootContext?: { prototype: { forkWithVariable?(name: string, type: unknown): IterationScope } };
};

function iterationScopePrototype(): IterationScope {
  const fork = registry.RootContext?.prototype.forkWithVariable;
  if (typeof fork !== 'function') throw new Error('cel-js internals changed: RootContext.forkWithVariable is gone');
  const scope = fork.call({}, 'x', null);
  const proto = Object.getPrototypeOf(scope) as IterationScope;
  if (typeof proto.setIterValue !== 'function') throw new Error('cel-js internals changed: setIterValue is gone');
  return proto;
}

const proto = iterationScopePrototype();
const setIterValue = proto.setIterValue;
proto.setIterValue = function meteredSetIterValue(this: IterationScope, value: unknown, evaluator: unknown) {
  chargeCel(1);
  return setIterValue.call(this, value, evaluator);
};
