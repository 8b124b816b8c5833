import Redis from 'ioredis';

export class Store {
  private conn: Promise<Redis>;

  get client(): Promise<Redis> {
    return this.conn;
  }

  async read(id: string) {
    const c = await this.client;
    await c.get('fx:g:' + id); // want unregistered-code fx:g:{id}
  }
}

export function notClients() {
  const redisCache = new Map<string, string>();
  redisCache.get('fx:not-a-key');
}
