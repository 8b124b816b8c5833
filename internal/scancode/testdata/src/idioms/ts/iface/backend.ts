import type { Conn, QueueContext } from './context';

export class Backend {
  protected queue: QueueContext;
  private conn: Conn;

  constructor(queue: QueueContext, conn: Conn) {
    this.queue = queue;
    this.conn = conn;
  }

  async job(id: string) {
    const client = await this.queue.client;
    return client.hgetall('fx:job:' + id); // want unregistered-code fx:job:{id}
  }

  async meta() {
    return (await this.queue.client).get('fx:meta'); // want unregistered-code fx:meta
  }

  async direct(id: string) {
    return this.conn.client.get('fx:conn:' + id); // want unregistered-code fx:conn:{id}
  }

  names(queue: QueueContext) {
    return queue.name.split(':'); // not a client: a string member of the interface
  }
}
