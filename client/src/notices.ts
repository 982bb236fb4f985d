/** Says each verdict once: the same failure in the same terminal output is offered only the first time. */
export class Once {
  private readonly said = new Set<string>();
  private readonly order: string[] = [];

  constructor(private readonly capacity = 200) {}

  /** True the first time a key is seen. */
  first(key: string): boolean {
    if (this.said.has(key)) return false;
    this.said.add(key);
    this.order.push(key);
    if (this.order.length > this.capacity) this.said.delete(this.order.shift()!);
    return true;
  }
}
