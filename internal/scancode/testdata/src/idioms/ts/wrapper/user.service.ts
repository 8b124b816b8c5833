import { RedisService } from './redis.service';

export class UserService {
  constructor(private readonly redisService: RedisService) {}

  async save(id: number) {
    await this.redisService.set(`fx:user:${id}`, '1'); // want unregistered-code fx:user:{id:int} via RedisService.set
  }
}
