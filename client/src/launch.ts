// How the server process is started; shared by the extension and the packaging test.

/**
 * `python -I` ignores PYTHON* variables and the user's site-packages, so nothing in the user's
 * environment can shadow the bundled libraries; the bootstrap then puts them first on sys.path.
 */
const BOOTSTRAP = "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'firstfault'; runpy.run_module('firstfault', run_name='__main__', alter_sys=True)";

export function serverArgs(libraries: string): string[] {
  return ["-I", "-c", BOOTSTRAP, libraries, "lsp"];
}
