export interface Clipboard {
  readText(): Thenable<string> | Promise<string>;
  writeText(text: string): Thenable<void> | Promise<void>;
}

/**
 * Reads the terminal's selection the stable way: run its copy command and read the clipboard, then put
 * back what the user had. A marker written first tells "nothing selected" (the copy leaves it) apart.
 */
export async function copyThroughClipboard(clipboard: Clipboard, copy: () => Thenable<unknown> | Promise<unknown>): Promise<string | undefined> {
  const previous = await clipboard.readText();
  const marker = `firstfault-empty-selection-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  await clipboard.writeText(marker);
  try {
    await copy();
    const copied = await clipboard.readText();
    return copied === marker || copied === "" ? undefined : copied;
  } finally {
    await clipboard.writeText(previous);
  }
}
