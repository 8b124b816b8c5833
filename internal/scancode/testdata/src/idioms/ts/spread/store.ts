import Redis from 'ioredis';

// Wrappers that hand Redis their arguments as they come: the keys are
// their callers' arguments, at the command's key positions.
export class Store {
  private readonly client: Redis;
  private readonly shas: Record<string, string> = {};

  constructor() {
    this.client = new Redis();
  }

  remove(...keys: string[]) {
    return this.client.del(...keys);
  }

  // EVALSHA sha numkeys key… arg…: numkeys says which are keys
  run(name: string, ...args: (string | number)[]) {
    return this.client.evalsha(this.shas[name], ...args);
  }

  drop(id: number) {
    this.remove(`fx:spread:${id}:a`, `fx:spread:${id}:b`); // want unregistered-code fx:spread:{id:int}:a via Store.remove | want unregistered-code fx:spread:{id:int}:b via Store.remove
    this.run('pop', 2, `fx:spread:${id}:queue`, `fx:spread:${id}:busy`, 'fx:not:a:key'); // want unregistered-code fx:spread:{id:int}:queue via Store.run | want unregistered-code fx:spread:{id:int}:busy via Store.run
  }
}

// Not a client: a Map's delete spread is not a Redis call.
export function forget(cache: Map<string, number>, ...names: string[]) {
  names.forEach((n) => cache.delete(n));
}
forget(new Map(), 'fx:not:redis');
