export interface IRedisClient {
  get(key: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
}
export type RedisClient = IRedisClient;
