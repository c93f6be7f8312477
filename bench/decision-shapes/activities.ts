/** An activity that does nothing: what is left is Temporal's cost of one. */
export async function nothing(i: number): Promise<number> {
  return i;
}
