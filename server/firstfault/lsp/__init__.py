"""The language server: thin LSP handlers over the engine (pygls 2)."""
