/** Whether dist/ under `root` is complete and no newer than the sources it is compiled from. */
export function compiledIsCurrent(root: string): boolean;
