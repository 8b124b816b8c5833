export const SESSION = 'fx:sess:';

export enum Prefix {
  Lock = 'fx:lock:',
}

export const siteKey = (id: number) => `fx:site:${id}`;

export class Keys {
  static readonly ORDER = 'fx:order:';
}
