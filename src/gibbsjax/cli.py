"""The ``gibbsjax`` command line: run a config, summarise or plot a result.

::

    gibbsjax run CONFIG.toml [--out RESULT.nc] [--force] [--seed N] [--no-progress] [--chunk-size N]
                             [--chains N] [--warmup N] [--draws N]
                             [--until "rhat<1.01,ess>400" [--max-draws N]] [--strict] [--details]
    gibbsjax resume RESULT.nc --draws N [--out NEW.nc] [--force] [--until RULE [--max-draws N]] [--strict]
                              [--details]
    gibbsjax summary RESULT.nc
    gibbsjax models
    gibbsjax plot RESULT.nc [--kind trace|rank|lp|agreement|words] [-o FIG.png] [--force] [--var NAME ...]
                            [--max-chains N] [--per-panel N] [--top N]
    gibbsjax --version

``run`` checks that the output folder takes a file, samples (a progress bar on
stderr), saves the raw draws as NetCDF (atomically: written beside and renamed),
post-processes them (the model's alignment and estimates) and saves the result
over them, prints the convergence summary (mean, sd, HDI, MCSE, bulk/tail ESS,
R-hat, and the log joint ``lp``) and the model's report, and where the result went.
For a model whose report leads with the answer (LDA: the stable topics with their
top words, held-out perplexity, then the agreement of the chains, R-hat of ``lp``
and one verdict line) the report comes alone; ``--details`` adds the summary
table and the per-chain and per-topic tables, which ``gibbsjax summary`` always prints.  Nothing finished
is lost: Ctrl-C or SIGTERM during sampling keeps the draws finished so far
(``attrs["interrupted"] = 1``; exit status 130, or 143 for SIGTERM); an
interrupt or a failure during post-processing keeps the raw draws.  ``--until``
keeps sampling, ``--draws`` at a time, until the rule holds on the
label-invariant quantities or ``--max-draws`` is reached, and says which.

``--strict`` makes disagreeing chains an error for pipelines: when the report
says "chains disagree" (:func:`gibbsjax.reports.chains_disagree`), ``run`` and
``resume`` still save the result, then print one line on stderr and exit with
status 1 (0 when the chains agree).

``models`` lists every model a config may name: the built-in ones, those other installed
packages publish through the entry-point group ``gibbsjax.models``
(:data:`gibbsjax.config.ENTRY_POINT_GROUP`) and any registered at run time, each with its
``[model]`` parameters.

``resume`` continues a saved run (its last state, keys and running sums are
in the file's ``sampler_state`` group) for ``--draws`` more draws: the draws
are bit-identical to those of one run of the total length.

A bad config or a missing file prints one line ``gibbsjax: error: ...`` and
exits with status 2; so does an output that may not be written
(:mod:`gibbsjax.outputs`: a file the command reads, anything but a regular file,
an existing file gibbsjax did not write unless ``--force``, a folder that cannot
be written) and a run whose memory estimate exceeds what the machine has
(:mod:`gibbsjax.memory`), before any sampling.  ``--chains``, ``--warmup`` and ``--draws`` override the
config's ``num_chains``, ``num_warmup`` and ``num_draws``.

Also available as ``python -m gibbsjax``.  JAX and ArviZ are imported only by
the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from gibbsjax import __version__
from gibbsjax.reading import open_result, read_text  # (stdlib only: bounded reads, errors naming the file)

__all__ = ["main", "build_parser"]

EXIT_DISAGREE = 1  # --strict: the chains disagree (the result is saved)
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _err(msg: str) -> None:
    print(f"gibbsjax: {msg}", file=sys.stderr, flush=True)


def _one_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _quiet_arviz() -> None:
    # ArviZ 0.23 announces its refactor once a day; not a message for CLI users.
    warnings.filterwarnings("ignore", message=".*ArviZ is undergoing a major refactor.*")
    warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


# ============================================================================ shared helpers
def _summary_table(idata, var_names=None):
    """The summary table and, for a single chain, a note (R-hat left out)."""
    from gibbsjax.diagnostics import summary

    if var_names is not None:
        var_names = [v for v in var_names if v in idata.posterior] or None
    if int(idata.posterior.sizes["chain"]) >= 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return summary(idata, var_names=var_names), None
    from gibbsjax.diagnostics import summary_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        table = summary_table(idata, var_names=var_names)  # float64, lp included
    table = table.drop(columns=["r_hat"], errors="ignore")
    note = "note: a single chain: R-hat (which compares chains) is left out; run num_chains >= 4 to check convergence"
    return table, note


def _print_summary(idata, details: bool = True, more: str | None = None) -> None:
    """The summary table and the model's report; for a model whose report leads with the
    answer (a ``details`` hook: LDA), the report alone, then with ``details`` the summary
    table and the model's tables, else the line ``more`` (where the tables are)."""
    if int(idata.posterior.sizes.get("draw", 0)) == 0:
        print("(no draws to summarise)")
        return
    from gibbsjax.config import spec_for

    entry = spec_for(idata)
    answer_first = entry is not None and entry.details is not None
    if answer_first and entry.report is not None:
        print(entry.report(idata))
        if not details:
            if more:
                print(more)
            return
        print()
        print("details:")
    table, note = _summary_table(idata, None if entry is None else entry.summary_vars)
    print(table.to_string())  # to_string: every row and column, no wrapping
    if note:
        print(note)
    report = entry.details if answer_first else (entry.report if entry is not None else None)
    if report is not None:
        print()
        print(report(idata))


def _open_result(path_arg: str):
    path = Path(path_arg)
    idata = open_result(path)  # a regular, readable NetCDF file within the limit, else ReadError (exit 2)
    if "posterior" not in idata.groups():
        raise CLIError(f"{path} has no posterior group; is it a gibbsjax result?")
    from gibbsjax.diagnostics import with_current_names

    return path, with_current_names(idata)


class _StopSignals:
    """For the whole command: SIGTERM (``timeout``, ``kill``, job schedulers) acts
    like Ctrl-C, raising ``KeyboardInterrupt``; the runner turns both into "stop
    after the chunk in flight" while it samples.  ``name`` is the last signal."""

    name: str | None = None

    def __enter__(self):
        import signal
        import threading

        self._previous = None
        if (threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTERM")
                and signal.getsignal(signal.SIGTERM) != signal.SIG_IGN):  # an ignored SIGTERM stays ignored
            self._previous = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum, frame):
        _StopSignals.name = "SIGTERM"
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
        return False


def _save(idata, out: Path) -> None:
    """Write NetCDF atomically (:func:`gibbsjax.outputs.write_netcdf`): an interrupted
    or failed save leaves the previous file; a signal during it is held until the file
    is complete and then raised as :class:`gibbsjax.outputs.SaveInterrupted`."""
    from gibbsjax.outputs import write_netcdf

    write_netcdf(idata, out)


def _same_file(a, b) -> bool:
    from gibbsjax.outputs import same_file

    return same_file(a, b)


def _result_inputs(idata) -> list:
    """The files the config of a result reads (:func:`gibbsjax.outputs.config_inputs`),
    from the TOML it holds, without building its data."""
    import tomllib

    from gibbsjax.outputs import config_inputs

    attrs = idata.attrs
    config_file = str(attrs["config_file"]) if attrs.get("config_file") else None
    try:
        data = tomllib.loads(str(attrs.get("config_toml", ""))).get("data")
    except tomllib.TOMLDecodeError:
        data = None  # config_of says what is wrong
    return config_inputs(config_file, data if isinstance(data, dict) else None)


def _check_output(out: Path, inputs=(), *, force: bool = False, kind: str = "result") -> None:
    """Before sampling: ``out`` may be written (:func:`gibbsjax.outputs.check_output`:
    not a file the run reads, a regular file, not someone else's file unless --force,
    in a folder that takes a file); one line, exit 2."""
    from gibbsjax.outputs import check_output

    check_output(out, inputs=inputs, force=force, kind=kind)


def _check_disk(out: Path, kernel, data, settings) -> None:
    """Before sampling: the disk holding ``out`` has room for the result (written
    twice over: the raw draws, then the result beside them until renamed)."""
    import shutil

    from gibbsjax.run import estimate_result_bytes

    need = 2 * estimate_result_bytes(kernel, data, settings)
    free = shutil.disk_usage(out.parent).free
    if need > free:
        raise CLIError(f"the result needs about {need / 2**20:.0f} MiB on disk (written twice: raw draws, then "
                       f"the result) but {out.parent} has {free / 2**20:.0f} MiB free: free space, choose "
                       "another --out, or keep fewer draws (--draws, thin)")


def _quick_output(config_path: str, override: str | None):
    """The output path of a config and the files it reads, from its TOML alone (no
    data built): ``(out, inputs)``, or None when the TOML cannot be read."""
    import tomllib

    from gibbsjax.outputs import config_inputs

    try:
        doc = tomllib.loads(read_text(config_path, kind="config"))
    except (OSError, ValueError):  # (a ReadError or a TOMLDecodeError)
        return None  # load_config says what is wrong
    data = doc.get("data")
    inputs = config_inputs(config_path, data if isinstance(data, dict) else None)
    if override is not None:
        return Path(override), inputs
    output = doc.get("output")
    if isinstance(output, dict) and isinstance(output.get("path"), str) and output["path"]:
        return Path(output["path"]), inputs
    return Path(f"{Path(config_path).stem}.nc"), inputs


def _enable_cache() -> None:
    if not os.environ.get("GIBBSJAX_NO_CACHE"):  # before anything compiles (data building does)
        from gibbsjax.run import enable_compilation_cache

        try:
            enable_compilation_cache()
        except OSError:  # read-only home: run without the cache
            pass


def _sample_and_save(config, out: Path, sample, *, requested: int, before: int = 0, strict: bool = False,
                     details: bool = False) -> int:
    """The end of ``run`` and ``resume``: sample, save the raw draws (atomically),
    post-process, save the result over them; say what was kept at every exit.
    ``strict``: exit status 1 when the chains of the saved result disagree;
    ``details``: the report with the tables behind it."""
    from gibbsjax.config import postprocess_result

    _StopSignals.name = None
    with warnings.catch_warnings():
        # this command reports an interrupt itself, below
        warnings.filterwarnings("ignore", message="(resumed )?run interrupted", category=RuntimeWarning)
        try:
            raw = sample()
        except KeyboardInterrupt:
            _err("interrupted before any draw finished; nothing saved")
            return _interrupt_status(_StopSignals.name)
    if not _is_writer():  # the other processes of a --distributed run: their part is done
        return 0
    interrupted = bool(int(raw.attrs.get("interrupted", 0)))
    n_chains = int(raw.posterior.sizes["chain"])
    n_draws = int(raw.posterior.sizes["draw"])
    kept = f"{n_draws} draws per chain ({n_chains} chains)"
    left = max(requested - (n_draws - before), 1)
    finish = f"continue with: gibbsjax resume {out} --draws {left}" if interrupted else \
        f"finish with: gibbsjax resume {out} --draws 0"
    from gibbsjax.outputs import SaveInterrupted

    try:
        _save(raw, out)
    except SaveInterrupted as e:  # what was written is what the message says
        sig = e.signal or _StopSignals.name or "SIGINT"
        if e.written:
            _err(f"interrupted ({sig}) while saving: the raw draws ({kept}) are saved in {out}, not "
                 f"post-processed; {finish}")
        else:
            _err(f"interrupted ({sig}) while saving; {out} was not written (any earlier file there is unchanged)")
        return _interrupt_status(sig)
    except KeyboardInterrupt:
        _err(f"interrupted while saving; {out} was not written (any earlier file there is unchanged)")
        return _interrupt_status(_StopSignals.name)
    except OSError as e:
        raise CLIError(f"cannot write {out}: {e.strerror or _one_line(e)}") from None
    warm = _warmup_left(raw) if interrupted else None
    if warm is not None:
        done, total = warm
        by = raw.attrs.get("interrupted_by", "SIGINT")
        _err(f"run interrupted ({by}) during warm-up after {done} of {total} warm-up sweeps: no posterior draws "
             f"yet; saved the warm-up state (sampler_state, {n_chains} chains) to {out} (attrs interrupted = 1); "
             f"finish the warm-up and sample with: gibbsjax resume {out} --draws {max(requested, 1)}")
    elif interrupted:
        by = raw.attrs.get("interrupted_by", "SIGINT")
        _err(
            f"run interrupted ({by}): kept {n_draws - before} of {requested} draws per chain "
            f"({n_chains} chains), saved to {out} (attrs interrupted = 1); "
            f"continue with: gibbsjax resume {out} --draws {left}"
        )
    if n_draws:
        try:
            idata = postprocess_result(config, raw)
            _save(idata, out)
        except SaveInterrupted as e:
            sig = e.signal or _StopSignals.name or "SIGINT"
            if e.written:
                _err(f"interrupted ({sig}) while saving: the post-processed result ({kept}) is saved in {out}")
            else:
                _err(f"interrupted ({sig}) while saving the post-processed result: the raw draws ({kept}) are "
                     f"saved in {out}, not post-processed; finish with: gibbsjax resume {out} --draws 0")
            return _interrupt_status(sig)
        except KeyboardInterrupt:
            _err(f"interrupted during post-processing: the raw draws ({kept}) are saved in {out}, "
                 f"not post-processed; finish with: gibbsjax resume {out} --draws 0")
            return _interrupt_status(_StopSignals.name)
        except Exception as e:  # a failing postprocess must not lose the draws
            raise CLIError(f"post-processing failed ({type(e).__name__}: {_one_line(e)}); the raw draws "
                           f"({kept}) are saved in {out}") from None
    else:
        idata = raw
    _print_summary(idata, details, f"(the per-chain and per-topic tables: gibbsjax summary {out}, or --details)")
    _print_until(idata)
    print(f"saved {out}")
    if interrupted:
        return _interrupt_status(str(raw.attrs.get("interrupted_by", "SIGINT")))
    return _strict_status(idata, out) if strict and n_draws else 0


def _strict_status(idata, out: Path) -> int:
    """``--strict``: 1, with one line on stderr, when the chains of the saved result disagree; else 0."""
    from gibbsjax.reports import disagreement_line

    line = disagreement_line(idata, f"{out} is saved; the report above, or `gibbsjax summary {out}`, says more")
    if line is None:
        return 0
    sys.stdout.flush()
    _err(f"--strict: {line}")
    return EXIT_DISAGREE


def _warmup_left(raw) -> tuple[int, int] | None:
    """``(sweeps done, num_warmup)`` of a result stopped during its warm-up, else None."""
    st = raw["sampler_state"] if "sampler_state" in raw.groups() else None
    if st is None:
        return None
    done, total = int(st.attrs.get("next_sweep", 0)), int(st.attrs.get("num_warmup", 0))
    return (done, total) if done < total else None


def _interrupt_status(name: str | None) -> int:
    """130 after Ctrl-C, 143 after SIGTERM (128 + the signal's number, as shells report)."""
    return EXIT_TERMINATED if name == "SIGTERM" else EXIT_INTERRUPTED


def _print_until(idata) -> None:
    attrs = idata.attrs
    if not attrs.get("until"):
        return
    n = int(idata.posterior.sizes["draw"])
    values = attrs.get("until_values", "")
    if int(attrs.get("until_met", 0)):
        print(f"until {attrs['until']}: met after {n} draws per chain ({values})")
    elif int(attrs.get("interrupted", 0)):
        print(f"until {attrs['until']}: not checked to the end (interrupted at {n} draws per chain)")
    else:
        print(f"until {attrs['until']}: NOT met; stopped at the cap of {attrs.get('max_draws')} draws per chain "
              f"({values}); see the advice above, or resume with a higher --max-draws")


# ============================================================================ commands
def _start_distributed(args) -> None:
    """``--distributed``: join the other processes (``jax.distributed.initialize``) before JAX
    does anything else; only process 0 goes on to write and print (see :func:`_sample_and_save`)."""
    if not getattr(args, "distributed", False):
        if getattr(args, "num_processes", None) is not None or getattr(args, "process_id", None) is not None:
            raise CLIError("--num-processes and --process-id go with --distributed")
        return
    import jax

    # CPU devices of several processes need a collectives implementation (no effect on GPUs)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(num_processes=args.num_processes, process_id=args.process_id)
    except (ValueError, RuntimeError) as e:
        raise CLIError(f"--distributed: cannot join the other processes ({_one_line(e)}); on a cluster JAX reads "
                       "its environment, elsewhere set JAX_COORDINATOR_ADDRESS=host:port and give "
                       "--num-processes and --process-id") from None


def _is_writer() -> bool:
    """Process 0 of a ``--distributed`` run (or the only process) writes the result and prints."""
    import jax

    return jax.process_index() == 0


def _cmd_run(args) -> int:
    _start_distributed(args)
    early = _quick_output(args.config, args.out)
    if early is not None:
        _check_output(*early, force=args.force)  # seconds, not after an hour of sampling
    _enable_cache()
    from gibbsjax.config import load_config

    config = load_config(args.config)
    out = config.output_path(args.out)
    from gibbsjax.outputs import config_inputs

    _check_output(out, config_inputs(args.config, config.data_section), force=args.force)
    if args.max_draws is not None and args.until is None:
        raise CLIError("--max-draws is the cap of --until; give --until as well")
    overrides = dict(seed=args.seed, chunk_size=args.chunk_size, num_chains=args.chains, num_warmup=args.warmup,
                     num_draws=args.draws, until=args.until, max_draws=args.max_draws, devices=args.devices,
                     shard=args.shard)
    job = config.job(progress=not args.no_progress, **overrides)  # the one build of the job
    import arviz  # noqa: F401  (imported now, not after a Ctrl-C)
    from gibbsjax import pipeline

    def sample():  # the memory check is run.sample's (the most common limit, first), then the disk's
        return pipeline.sample(job, preflight=lambda: _check_disk(out, job.kernel, job.data, job.settings))

    requested = args.draws or config.sampler.num_draws
    return _sample_and_save(config, out, sample, requested=requested, strict=args.strict,
                            details=args.details)


def _cmd_resume(args) -> int:
    _start_distributed(args)
    path = Path(args.result)
    out = Path(args.out) if args.out else path
    if args.max_draws is not None and args.until is None:
        raise CLIError("--max-draws is the cap of --until; give --until as well")
    if args.until is not None and args.draws == 0:
        raise CLIError("--until needs --draws N >= 1: the draws added between checks")
    _enable_cache()
    path, idata = _open_result(args.result)
    # before the data are read: what the run reads is never the output (the result itself is, by default)
    inputs = _result_inputs(idata)
    if not _same_file(out, path):
        inputs.append(("the result being resumed", path))
    _check_output(out, inputs, force=args.force)
    from gibbsjax.config import config_of, resume_result

    config = config_of(idata)
    idata.load()  # read it all now: the file may be replaced by the result
    before = int(idata.posterior.sizes["draw"])
    import arviz  # noqa: F401

    def sample():
        return resume_result(idata, args.draws, progress=not args.no_progress, chunk_size=args.chunk_size,
                             until=args.until, max_draws=args.max_draws, config=config, postprocess=False,
                             devices=args.devices)

    return _sample_and_save(config, out, sample, requested=args.draws, before=before, strict=args.strict,
                            details=args.details)


_ATTRS_SHOWN = (
    ("model", "model"),
    ("hyperparameters", "hyperparameters"),
    ("data", "data"),
    ("config_file", "config"),
    ("seed", "seed"),
    ("num_warmup", "warm-up"),
    ("warmup", "warm-up transition"),
    ("thin", "thin"),
    ("resumed", "resumed (times)"),
    ("sharding", "devices"),
    ("until", "until"),
    ("until_values", "at the last check"),
    ("sampling_time_s", "sampling time (s)"),
)


def _cmd_models(args) -> int:
    from gibbsjax.config import model_rows

    rows = model_rows()
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        origin = "" if r["origin"] == "built-in" else f" [{r['origin']}]"
        print(f"{r['name']:<{width}}  {r['description']}{origin}")
        print(f"{'':<{width}}  parameters: {r['parameters'] or '(none)'}")
    print(f"{len(rows)} models; a config names one as [model] name = \"...\"")
    return 0


def _cmd_summary(args) -> int:
    path, idata = _open_result(args.result)
    attrs = dict(idata.attrs)
    post = idata.posterior
    n_chains, n_draws = int(post.sizes["chain"]), int(post.sizes["draw"])
    model = attrs.get("model", attrs.get("gibbsjax_kernel", "?"))
    print(f"result: {path}")
    for key, label in _ATTRS_SHOWN:
        value = model if key == "model" else attrs.get(key)
        if key == "sharding" and value == "none":
            continue  # one device: nothing to say
        if value is not None and value != "":
            print(f"{label}: {value}")
    requested = attrs.get("num_draws_requested")
    draws = f"{n_draws}" + (f" (of {requested} requested)" if requested not in (None, n_draws) else "")
    print(f"chains: {n_chains}")
    print(f"draws per chain: {draws}")
    print(f"interrupted: {_attr_int(attrs.get('interrupted', 0))}")
    print()
    bad = [name for name, v in post.data_vars.items() if not (v.dtype.kind in "biuf")]
    if bad:
        raise CLIError(f"{path}: posterior variable {bad[0]!r} is not numeric; is it a gibbsjax result?")
    try:
        _print_summary(idata)
    except Exception as e:  # a foreign file: attrs naming a model whose report cannot read it, ...
        raise CLIError(
            f"cannot summarise {path} ({type(e).__name__}: {_one_line(e)}); is it a gibbsjax result?"
        ) from None
    return 0


def _attr_int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _cmd_plot(args) -> int:
    path, idata = _open_result(args.result)
    if int(idata.posterior.sizes["draw"]) == 0:
        raise CLIError(f"{path} has no draws to plot")
    from gibbsjax import plots

    if args.var and args.kind not in ("trace", "rank"):
        raise CLIError(f"--var applies to --kind trace and rank, not {args.kind}")
    available = plots.variable_names(idata)
    for name in args.var or ():
        if name not in available:
            raise CLIError(f"unknown variable {name!r} in {path}; variables: {', '.join(available)}")
    out = Path(args.output) if args.output else path.with_name(f"{path.stem}_{args.kind}.png")
    _check_output(out, [("the result being plotted", path)], force=args.force, kind="plot")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase

    from gibbsjax.outputs import SaveInterrupted, plot_metadata, write_atomic

    fmt = out.suffix[1:].lower() or str(matplotlib.rcParams["savefig.format"])
    formats = FigureCanvasBase.get_supported_filetypes()
    if fmt not in formats:
        raise CLIError(f"cannot write {out}: image format {fmt!r} is not supported; formats: {', '.join(formats)}")

    chains = {} if args.max_chains is None else {"max_chains": args.max_chains}
    draw = {
        "trace": lambda: plots.plot_trace(idata, args.var, max_per_panel=args.per_panel, **chains),
        "rank": lambda: plots.plot_rank(idata, args.var, **chains),
        "lp": lambda: plots.plot_lp(idata, **chains),
        "agreement": lambda: plots.plot_agreement(idata, **chains),
        "words": lambda: plots.plot_top_words(idata, n=args.top),
        "stable": lambda: plots.plot_stable_topics(idata),
    }[args.kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arviz/matplotlib deprecation chatter
        try:
            fig = draw()
        except ValueError as e:  # what the result lacks (no lp, no agreement group, ...)
            raise CLIError(f"cannot draw the {args.kind} plot of {path}: {_one_line(e)}") from None
    try:
        write_atomic(out, lambda tmp: fig.savefig(tmp, format=fmt, dpi=args.dpi, bbox_inches="tight",
                                                  metadata=plot_metadata(fmt)))
    except SaveInterrupted as e:
        _err(str(e))
        return _interrupt_status(e.signal or _StopSignals.name)
    except (OSError, ValueError) as e:
        raise CLIError(f"cannot write {out}: {_one_line(e)}") from None
    finally:
        plt.close(fig)
    print(f"saved {out}")
    return 0


def _cmd_choose_k(args) -> int:
    from gibbsjax.config import load_config

    config = load_config(args.config)
    if not config.model.startswith("lda."):
        raise CLIError(f"choose-k needs an LDA config, {args.config} runs {config.model}")
    from gibbsjax.topics.choose_k import choose_num_topics, table_lines

    hyper = {k: v for k, v in config.hyperparameters.items()
             if k in ("alpha", "eta", "learn_alpha", "asymmetric_alpha", "learn_eta", "alpha_prior", "eta_prior")}
    settings = config.sampler
    chains = args.chains or settings.num_chains
    options = dict(num_chains=chains, num_warmup=settings.num_warmup if args.warmup is None else args.warmup,
                   num_draws=args.draws or settings.num_draws, min_share=args.min_share,
                   seed=settings.seed if args.seed is None else args.seed, progress=not args.no_progress)
    heldout = config.extras.get("heldout")
    print(f"choosing K by stability: {chains} chains per K, K in {', '.join(map(str, args.K))}; "
          f"held-out perplexity on {heldout.num_docs if heldout is not None else 0} documents ([data] heldout)")
    table = choose_num_topics(config.extras["corpus"], args.K, heldout=heldout, sampler=config.model[4:],
                              **hyper, **options)
    print("\n".join(table_lines(table)))
    print(f"stability: the mean share of chains that hold each topic's cluster (gibbsjax.topics.choose_k); "
          f"stable: clusters held by >= {args.min_share:.0%} of the chains")
    print(f"coherence ({table.attrs['coherence']}): the mean over the stable topics of gensim's "
          f"{table.attrs['coherence']} of their top {table.attrs['coherence_words']} words in the training "
          "documents (gibbsjax.evaluate.coherence; higher is better)")
    return 0


def _ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers of topics like 5,10,15, got {text!r}") from None
    if not ks or min(ks) < 1 or len(set(ks)) != len(ks):
        raise argparse.ArgumentTypeError(f"expected distinct positive numbers of topics like 5,10,15, got {text!r}")
    return ks


def _share(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share of chains in (0, 1], got {text!r}") from None
    if not 0.0 < v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share of chains in (0, 1], got {text!r}")
    return v


# ============================================================================ parser / main
def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {v}")
    return v


def _pos_int(text: str) -> int:
    v = _nonneg_int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def _seed(text: str) -> int:
    v = _nonneg_int(text)
    if v >= 2**32:
        raise argparse.ArgumentTypeError(f"expected a seed in [0, 2**32), got {v}")
    return v


def _until(text: str) -> str:
    from gibbsjax.stopping import parse_until

    try:
        parse_until(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _add_run_options(p) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--chunk-size",
        type=_pos_int,
        metavar="N",
        help="draws per compiled chunk (progress and Ctrl-C granularity; draws do not depend on it)",
    )
    p.add_argument(
        "--until",
        type=_until,
        metavar="RULE",
        help='run until converged, e.g. "rhat<1.01,ess>400" (on lp and the label-invariant variables), '
        "checking after every --draws draws",
    )
    p.add_argument("--max-draws", type=_pos_int, metavar="N", help="cap of --until, draws per chain in all "
                   "(default: 10 times the draws)")
    p.add_argument("--devices", type=_pos_int, metavar="N",
                   help="run on N devices (e.g. GPUs): the chains spread over them, or, when the chains are not a "
                   "multiple of N, the data split over them (LDA: documents); draws do not depend on N")
    p.add_argument("--distributed", action="store_true",
                   help="this process is one of several (jax.distributed, one per host): every process runs the "
                   "same command; JAX reads the cluster's environment (Slurm, Open MPI), else give "
                   "JAX_COORDINATOR_ADDRESS=host:port and --num-processes, --process-id; --devices counts the "
                   "devices of all processes; process 0 writes the result and prints")
    p.add_argument("--num-processes", type=_pos_int, metavar="N", help="with --distributed: the number of processes")
    p.add_argument("--process-id", type=_nonneg_int, metavar="I", help="with --distributed: this process's index")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 (after saving the result, one line on stderr) when the chains "
                   "disagree, as the report says; 0 when they agree")
    p.add_argument("--details", action="store_true",
                   help="after a report that leads with the answer (LDA: the stable topics), also print the "
                   "summary table and the per-chain and per-topic tables (as gibbsjax summary does)")


def _add_force(p, what: str) -> None:
    p.add_argument("--force", action="store_true",
                   help=f"replace an existing {what} that gibbsjax did not write (never a file the command reads, "
                   "nor anything but a regular file)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``gibbsjax`` command, with every subcommand.

    Returns
    -------
    argparse.ArgumentParser
        The parser :func:`main` uses.

    Examples
    --------
    >>> build_parser().parse_args(["summary", "run.nc"]).command
    'summary'
    """
    parser = argparse.ArgumentParser(
        prog="gibbsjax",
        description="Gibbs samplers as pure JAX functions: run a TOML config, "
        "summarise or plot its result.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "run",
        help="run a config file, save the draws (NetCDF) and print a summary",
        description="Run the sampler a TOML config describes (see gibbsjax.config for the "
        "format), print the convergence summary and save the draws as NetCDF. "
        "Ctrl-C keeps the draws finished so far (exit status 130).",
    )
    p.add_argument("config", metavar="CONFIG.toml", help="the job's TOML config file")
    p.add_argument("--out", metavar="RESULT.nc", help="output file (default: [output] path, else CONFIG name with .nc)")
    p.add_argument("--seed", type=_seed, metavar="N", help="override the config's seed (0 <= N < 2**32)")
    p.add_argument("--chains", type=_pos_int, metavar="N", help="override the config's num_chains")
    p.add_argument("--warmup", type=_nonneg_int, metavar="N", help="override the config's num_warmup")
    p.add_argument("--draws", type=_pos_int, metavar="N", help="override the config's num_draws")
    _add_run_options(p)
    _add_force(p, "RESULT.nc")
    p.add_argument("--shard", choices=("auto", "chains", "data"),
                   help="how --devices are used: spread the chains, split the data (LDA's documents: every "
                   "chain on every device, count tables summed each sweep), or auto (chains when they are "
                   "a multiple of the devices; the default)")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "resume",
        help="continue a saved run for more draws (bit-identical to one longer run)",
        description="Continue the run a result file holds (its last state, keys and settings are "
        "saved with it) for --draws more draws per chain, then post-process and save the whole run. "
        "The draws are bit-identical to those of one run of the total length. --draws 0 only "
        "post-processes (e.g. after an interrupted post-processing).",
    )
    p.add_argument("result", metavar="RESULT.nc")
    p.add_argument("--draws", type=_nonneg_int, metavar="N", required=True, help="draws per chain to add")
    p.add_argument("--out", metavar="NEW.nc", help="output file (default: RESULT.nc itself, replaced atomically)")
    _add_run_options(p)
    _add_force(p, "NEW.nc")
    p.set_defaults(func=_cmd_resume)

    p = sub.add_parser(
        "summary",
        help="print a result's summary table and run settings",
        description="Print the run settings and the convergence summary of a saved result.",
    )
    p.add_argument("result", metavar="RESULT.nc")
    p.set_defaults(func=_cmd_summary)

    p = sub.add_parser(
        "models",
        help="list the models a config may name, with their [model] parameters",
        description="List every model a config may name: the built-in ones and those other installed "
        "packages publish through the entry-point group gibbsjax.models, each with its description and "
        "the parameters of its [model] table (with their defaults).",
    )
    p.set_defaults(func=_cmd_models)

    p = sub.add_parser(
        "plot",
        help="plot a result (trace, rank, lp per chain, chain agreement, top words) as an image",
        description="Draw a plot of a saved result (see gibbsjax.plots): trace (densities and "
        "traces, many components split into panels), rank (per-chain rank histograms), lp (the log joint "
        "per chain), agreement (chains x topics/clusters heatmap) or words (top words per "
        "topic/cluster) or stable (the topics that recur across chains, LDA). Runs with more chains than --max-chains are drawn from a random "
        "sample of chains (fixed seed); the figure says so.",
    )
    p.add_argument("result", metavar="RESULT.nc")
    p.add_argument("--kind", choices=("trace", "rank", "lp", "agreement", "words", "stable"), default="trace",
                   help="plot kind (default: trace)")
    p.add_argument("-o", "--output", metavar="FIG.png", help="image file (default: RESULT_<kind>.png beside RESULT)")
    p.add_argument("--var", nargs="+", metavar="NAME",
                   help="variables for trace/rank, lp included (default: all posterior variables and lp)")
    p.add_argument("--max-chains", type=_pos_int, metavar="N",
                   help="draw at most N chains, a random sample of larger runs (default: 16; agreement 32)")
    p.add_argument("--per-panel", type=_pos_int, default=None, metavar="N",
                   help="trace: at most N components per panel (default: one; colours are chains)")
    p.add_argument("--top", type=_pos_int, default=10, metavar="N", help="words: words per topic (default: 10)")
    p.add_argument("--dpi", type=_pos_int, default=100, help="image resolution (default: 100)")
    _add_force(p, "FIG.png")
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser(
        "choose-k",
        help="fit an LDA config for several K and compare the stability of their topics",
        description="Fit the LDA config's corpus for every K of --K, each with many chains, and print per K "
        "the stability of the topics (how many chains share each topic's cluster; gibbsjax.topics.choose_k), the "
        "number of stable topics, held-out perplexity ([data] heldout) and coherence (gensim's u_mass of the "
        "stable topics' top 10 words). Nothing is saved.",
    )
    p.add_argument("config", metavar="CONFIG.toml", help="an LDA config (its [model] K is replaced by --K)")
    p.add_argument("--K", type=_ks, required=True, metavar="K1,K2,...", help="numbers of topics, e.g. 5,10,15")
    p.add_argument("--chains", type=_pos_int, metavar="N", help="chains per K (default: the config's num_chains)")
    p.add_argument("--warmup", type=_nonneg_int, metavar="N", help="override the config's num_warmup")
    p.add_argument("--draws", type=_pos_int, metavar="N", help="override the config's num_draws")
    p.add_argument("--seed", type=_seed, metavar="N", help="override the config's seed")
    p.add_argument("--min-share", type=_share, default=0.5, metavar="X",
                   help="share of chains a stable topic needs (default: 0.5)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_choose_k)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``gibbsjax`` and ``python -m gibbsjax``; returns the exit status.

    Run as the program (``argv`` None), an interrupted run ends the process
    right away (``os._exit(130)``, after its output is saved and flushed): a
    Ctrl-C landing inside JAX's compiler can leave objects that crash the
    interpreter's clean-up with a segmentation fault.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program's name; ``None``: ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0, 1 (``--strict`` and the chains disagree), 2 (a bad config,
        file or option), 130 or 143 (interrupted).

    Examples
    --------
    >>> main(["summary", "no-such-result.nc"])
    2
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    _quiet_arviz()
    try:
        with _StopSignals():
            status = args.func(args)
    except (CLIError, ValueError) as e:  # ConfigError and model/data ValueErrors included
        _err(f"error: {_one_line(e)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("interrupted")
        status = _interrupt_status(_StopSignals.name)
    if status in (EXIT_INTERRUPTED, EXIT_TERMINATED) and argv is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
