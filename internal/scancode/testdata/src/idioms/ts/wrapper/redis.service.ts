import Redis from 'ioredis';

// A wrapper around the client: set's key reaches Redis whole.
export class RedisService {
  private readonly client: Redis;

  constructor() {
    this.client = new Redis();
  }

  async set(key: string, value: string) {
    await this.client.set(key, value);
  }
}
