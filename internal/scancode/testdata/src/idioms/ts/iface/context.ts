// A queue's context, as a job-queue library declares it: the client is
// reached through an interface member, typed Promise<RedisClient> (the
// library's own client interface over ioredis and node-redis).
import type { RedisClient } from './client';

export interface QueueContext {
  get client(): Promise<RedisClient>;
  name: string;
}

export interface Conn {
  client: RedisClient;
}
