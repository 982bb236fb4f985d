// Maps VS Code settings to what the server reads (initializationOptions / didChangeConfiguration, under
// "firstfault"). Kept free of the vscode module so the mapping and the trust rule are unit-tested.

/** What `WorkspaceConfiguration.inspect` returns, reduced to the levels that matter for trust. */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** The effective value; in an untrusted workspace, workspace-level values are ignored. */
export function effective<T>(inspected: Inspected<T> | undefined, trusted: boolean): T | undefined {
  if (!inspected) return undefined;
  if (trusted) {
    return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue ?? inspected.defaultValue;
  }
  return inspected.globalValue ?? inspected.defaultValue;
}

/** Settings the server reads. Launch settings (the interpreter) are the client's and restart the server. */
export const SERVER_KEYS = ["signatureDirectories", "disabledReferences", "maxDiagnosticsPerFile", "minimumSeverity", "debounceMs"] as const;
/** Workspace-level values of these are ignored in an untrusted workspace (package.json restrictedConfigurations). */
export const RESTRICTED_KEYS = new Set(["interpreter", "signatureDirectories"]);

export function serverSettings(inspect: (key: string) => Inspected<unknown> | undefined, trusted: boolean): { firstfault: Record<string, unknown> } {
  const out: Record<string, unknown> = { trusted };
  for (const key of SERVER_KEYS) {
    const value = RESTRICTED_KEYS.has(key) ? effective(inspect(key), trusted) : effective(inspect(key), true);
    if (value !== undefined) out[key] = value;
  }
  return { firstfault: out };
}

/** The interpreter command from settings: a list of strings (["uv", "run", "python"]) or one path. */
export function interpreterSetting(value: unknown): string[] | undefined {
  if (typeof value === "string" && value.trim()) return [value.trim()];
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string" && v.trim())) {
    return value.map((v: string) => v.trim());
  }
  return undefined;
}
