"""The `firstfault` command: diagnose logs, explain references, list and check signatures."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from firstfault import __version__
from firstfault.reader import InputError
from firstfault.redaction import redact, report_hosts
from firstfault.render import (
    Style,
    brief_report,
    dumps,
    entry_text,
    markdown_report,
    reference_json,
    reference_text,
    text_report,
)

# 0: no failure found; 1: a failure diagnosed; 2: usage, input or output error; 3: firstfault itself failed.
EXIT_OK, EXIT_FAILURE_FOUND, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
PROGRESS_MIN_BYTES = 64 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="firstfault", description="Find the line that started a "
                                     "distributed GPU job's failure, from its logs. Nothing leaves this machine.")
    parser.add_argument("--version", action="version", version=f"firstfault {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback when firstfault itself fails")
    parser.add_argument("--signatures", action="append", type=Path, default=[], metavar="DIR",
                        help="an extra directory of signature files (repeatable)")
    sub = parser.add_subparsers(dest="command", required=True)

    diagnose = sub.add_parser("diagnose", help="diagnose log files, job folders (logs, torchelastic error files, "
                              "Flight Recorder dumps, ncclras reports), or '-' for stdin")
    diagnose.add_argument("paths", nargs="+", metavar="PATH")
    diagnose.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    diagnose.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    diagnose.add_argument("--brief", action="store_true", help="one line per diagnosis (for scripts and CI logs)")
    diagnose.add_argument("--baseline", action="append", default=[], metavar="PATH",
                          help="a log or folder of a run that worked (repeatable): what is new in the failed run, "
                               "the setup that differs, how far each got; lines both printed are not evidence")
    diagnose.add_argument("--redact", action="store_true",
                          help="mask host names, IP addresses and user names in paths (text and markdown output)")
    diagnose.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                          help="processes a large log file is read in at once (default: one per core)")

    lsp = sub.add_parser("lsp", help="start the language server on stdio")
    lsp.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP socket instead (for debugging)")

    explain = sub.add_parser("explain", help="print a whole reference, or explain an environment variable, "
                             "NCCL result, CUDA error, exit code, signal or Xid")
    explain.add_argument("id", metavar="ID_OR_TERM")
    explain.add_argument("--color", choices=("auto", "always", "never"), default="auto")

    sigs = sub.add_parser("signatures", help="list, show or check the signature library")
    sigs_sub = sigs.add_subparsers(dest="action", required=True)
    listing = sigs_sub.add_parser("list", help="every reference with its patterns' literals")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    show = sigs_sub.add_parser("show", help="one reference")
    show.add_argument("id")
    show.add_argument("--format", choices=("text", "json"), default="text")
    check = sigs_sub.add_parser("check", help="validate files and run every reference's tests")
    check.add_argument("dir", nargs="?", type=Path, help="check only this directory (default: the library)")
    check.add_argument("--unread", action="store_true",
                       help="also list, for each pattern, forms its regex accepts that none of its literals reaches "
                            "(lines the automaton never hands the regex); a writer's aid, not a failure")
    docs = sigs_sub.add_parser("docs", help="generate the reference pages (one per reference, an index with the "
                                            "catalogue's coverage, NCCL errors side by side)")
    docs.add_argument("out", nargs="?", type=Path, default=Path("docs/references"),
                      help="output directory (default: docs/references)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if sys.stdout is None:  # started with stdout closed (>&-): there is nowhere to write a verdict
        if sys.stderr is not None:
            print("firstfault: standard output is closed; nothing can be written", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "diagnose":
            return _diagnose(args)
        if args.command == "lsp":
            from firstfault.lsp.server import main as serve

            return serve(args.tcp)
        if args.command == "explain":
            return _explain(args.id, args.signatures, _colour(args.color))
        if args.action == "list":
            return _list(args.format, args.signatures)
        if args.action == "show":
            return _show(args.id, args.format, args.signatures)
        if args.action == "docs":
            return _docs(args.out, args.signatures)
        return _check(args.dir, args.signatures, args.unread)
    except InputError as exc:
        print(f"firstfault: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say, and nothing to flush at exit either.
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:
        if exc.filename is None:  # writing the output failed: a full disk, a closed stdout
            _silence_stdout()
            print(f"firstfault: cannot write the output ({exc.strerror or exc})", file=sys.stderr)
            return EXIT_USAGE
        return _internal_error(exc, args.debug)
    except Exception as exc:  # noqa: BLE001 - a crash must never look like a verdict (exit 1)
        return _internal_error(exc, args.debug)


def _internal_error(exc: BaseException, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    print(f"firstfault: internal error: {type(exc).__name__}: {str(exc)[:300]} (this is a firstfault bug; "
          "--debug shows where)", file=sys.stderr)
    return EXIT_INTERNAL


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _library(extra: list[Path]):
    from firstfault.loader import load_library

    library = load_library(extra)
    for error in library.errors:
        print(f"firstfault: warning: {error}", file=sys.stderr)
    return library


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of processes (1 or more)")
    return int(text)


def _diagnose(args: argparse.Namespace) -> int:
    from firstfault.engine import Engine
    from firstfault.parallel import default_jobs

    if args.paths.count("-") > 1:
        raise InputError("'-' (stdin) can be given only once")
    if args.format != "text" and args.brief:
        raise InputError(f"--brief prints text; it does not go with --format {args.format}")
    if args.format == "json" and args.redact:
        raise InputError("--redact masks text and markdown output; JSON keeps every value for the tools that read it")
    engine = Engine(_library(args.signatures), args.jobs if args.jobs is not None else default_jobs())
    if "-" in args.baseline:
        raise InputError("--baseline takes files or folders; stdin ('-') holds the failed run only")
    report = engine.analyze_paths(args.paths, progress=_progress_printer(), on_entry=_walk_printer(),
                                  baseline=args.baseline)
    if args.format == "json":
        out = dumps(report.to_json())
    elif args.format == "markdown":
        out = markdown_report(report)
    elif args.brief:
        out = brief_report(report)
    else:
        out = text_report(report, Style(_colour(args.color)))
    sys.stdout.write(redact(out, report_hosts(report)) if args.redact else out)
    return EXIT_FAILURE_FOUND if report.failed else EXIT_OK


def _colour(choice: str) -> bool:
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _progress_printer():
    """Progress on a terminal for inputs of PROGRESS_MIN_BYTES or more (the total is known once folders are
    walked)."""
    if not sys.stderr.isatty():
        return None
    last = [-1]

    def show(done: int, total: int) -> None:
        percent = done * 100 // max(total, 1)
        if total >= PROGRESS_MIN_BYTES and percent != last[0]:
            last[0] = percent
            end = "\n" if done >= total else ""
            print(f"\rfirstfault: scanned {done / 2**20:,.0f} of {total / 2**20:,.0f} MiB ({percent}%)",
                  end=end, file=sys.stderr, flush=True)
    return show


def _walk_printer():
    """A folder's walk on a terminal: how many entries were looked at so far (a folder can hold 100,000)."""
    if not sys.stderr.isatty():
        return None
    return lambda seen, finished: print(f"\rfirstfault: looked at {seen:,} entries", end="\n" if finished else "",
                                       file=sys.stderr, flush=True)


def _list(fmt: str, extra: list[Path]) -> int:
    library = _library(extra)
    refs = sorted(library.references.values(), key=lambda r: (r.category, r.id))
    if fmt == "json":
        sys.stdout.write(dumps({"version": __version__, "references": [reference_json(r) for r in refs]}))
    else:
        for ref in refs:
            print(f"{ref.id:40} {ref.category:14} {ref.title}")
            literals = dict.fromkeys(x for p in ref.patterns for x in p.literals)
            print(f"    literals: {' | '.join(literals)}")
    return EXIT_OK


def _show(ref_id: str, fmt: str, extra: list[Path], library=None) -> int:
    library = library if library is not None else _library(extra)
    ref = library.references.get(ref_id)
    if ref is None:
        close = _near(ref_id, list(library.references))
        hint = f"; did you mean {', '.join(close)}?" if close else "; see `firstfault signatures list`"
        print(f"firstfault: no reference '{ref_id}'{hint}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(dumps(reference_json(ref)) if fmt == "json" else reference_text(ref))
    return EXIT_OK


def _explain(term: str, extra: list[Path], colour: bool) -> int:
    """A reference id, or what people type about a failure: NCCL_DEBUG, SIGKILL, 137, -9, signal 11, xid79,
    ncclSystemError, a CUDA error name or message."""
    from firstfault.knowledge import Knowledge
    from firstfault.loader import builtin_dir

    library = _library(extra)
    if term in library.references:
        return _show(term, "text", extra, library)
    knowledge = Knowledge.load(builtin_dir() / "knowledge")
    entry = knowledge.lookup(term)
    if entry is not None:
        sys.stdout.write(entry_text(entry, knowledge.titles, Style(colour)))
        return EXIT_OK
    close = _near(term, [*library.references, *knowledge.names()])
    hint = f"; did you mean {', '.join(close)}?" if close else "; see `firstfault signatures list`"
    print(f"firstfault: nothing known as '{term}'{hint}", file=sys.stderr)
    return EXIT_USAGE


def _near(term: str, names: list[str]) -> list[str]:
    """Names that contain the term, then names spelled like it."""
    import difflib

    low = term.lower()
    contain = sorted(n for n in names if low in n.lower())
    lowered = {n.lower(): n for n in names}
    alike = [lowered[n] for n in difflib.get_close_matches(low, list(lowered), n=5, cutoff=0.6)]
    return list(dict.fromkeys(contain + alike))[:5]


def _docs(out: Path, extra: list[Path]) -> int:
    from firstfault.catalogue import load_catalogue
    from firstfault.docs import render_docs, write_docs
    from firstfault.knowledge import Knowledge
    from firstfault.loader import builtin_dir

    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: not a directory")
    pages = render_docs(_library(extra), Knowledge.load(builtin_dir() / "knowledge"), load_catalogue(builtin_dir()))
    written = write_docs(pages, out)
    print(f"wrote {len(written)} pages to {out}")
    return EXIT_OK


def _check(directory: Path | None, extra: list[Path], unread: bool = False) -> int:
    from firstfault.checks import check_library

    if directory is not None and not directory.is_dir():
        raise InputError(f"{directory}: not a directory of signature files")
    dirs = [directory] if directory is not None else extra
    result = check_library(dirs, include_builtin=directory is None, unread=unread)
    for note in result.unread:
        print(note)
    for problem in result.problems:
        print(problem)
    status = "FAILED" if result.problems else "ok"
    listed = f", {len(result.unread)} unread form(s) listed" if unread else ""
    print(f"signatures check {status}: {result.references} references, {result.patterns} patterns, "
          f"{result.examples} examples, {result.samples} sample logs, {len(result.problems)} problem(s){listed}")
    return 1 if result.problems else EXIT_OK
