"""TOML configs: the shipped ones load, every mistake is a ValueError naming its key."""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest

from gibbsjax import config as cfg
from gibbsjax.config import ConfigError, load_config, parse_config, register_model, run_config
from gibbsjax.run import Settings
from gibbsjax.spec import ModelSpec

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"

BASE = """
[model]
name = "normal.semiconjugate"
mu0 = 98.6
sigma0 = 0.5
a0 = 0.001
b0 = 0.001

[data]
dataset = "body_temperature"
column = "temperature_f"

[sampler]
seed = 1
num_chains = 4
num_warmup = 10
num_draws = 20
"""

BIVARIATE = """
[model]
name = "normal.bivariate"
rho = 0.8

[sampler]
seed = 1
num_chains = 4
num_warmup = 5
num_draws = 10

[sampler.init]
x1 = [2.5, -2.5, 2.5, -2.5]
x2 = [2.5, 2.5, -2.5, -2.5]
"""


def write(tmp_path: Path, text: str, name: str = "job.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- shipped configs
def test_body_temperature_config_loads():
    c = load_config(CONFIGS / "body-temperature.toml")
    assert c.model == "normal.semiconjugate"
    assert c.hyperparameters == {"mu0": 98.6, "sigma0": 0.5, "a0": 0.001, "b0": 0.001}
    assert c.sampler.num_chains == 4
    assert c.sampler.num_warmup >= 1000 and c.sampler.num_draws >= 2000
    assert c.data.y.shape == (130,)
    assert abs(float(c.data.ybar) - 98.249) < 1e-3
    assert c.output_path() == Path("body-temperature.nc")
    assert c.output_path("x.nc") == Path("x.nc")


def test_bivariate_config_loads():
    c = load_config(CONFIGS / "bivariate-normal.toml")
    assert c.model == "normal.bivariate"
    assert c.hyperparameters == {"rho": 0.8}
    assert c.data is None and c.data_section is None
    assert c.sampler.num_chains == 4 and c.sampler.num_warmup == 500 and c.sampler.num_draws >= 500
    corners = set(zip(c.sampler.init["x1"], c.sampler.init["x2"]))
    assert corners == {(2.5, 2.5), (-2.5, 2.5), (2.5, -2.5), (-2.5, -2.5)}


def test_defaults_and_output_name(tmp_path):
    text = BASE.replace("seed = 1\nnum_chains = 4\nnum_warmup = 10\nnum_draws = 20\n", "")
    c = load_config(write(tmp_path, text, "my-job.toml"))
    assert c.sampler == Settings()
    assert c.output_path() == Path("my-job.nc")


# ----------------------------------------------------------------------------- errors
def edit(old: str, new: str, base: str = BASE) -> str:
    assert old in base, old
    return base.replace(old, new)


ERROR_CASES = {
    "unknown model": (edit('"normal.semiconjugate"', '"normal.nope"'), r"unknown model name 'normal\.nope'.*normal\.semiconjugate"),
    "model name missing": (edit('name = "normal.semiconjugate"\n', ""), r"\[model\] name is required"),
    "model name not a string": (edit('"normal.semiconjugate"', "3"), r"\[model\] name must be a string"),
    "unknown hyperparameter": (edit("a0 = 0.001", "a0 = 0.001\nsigma = 2.0"), r"unknown key 'sigma'.*mu0, sigma0, a0, b0"),
    "bad hyperparameter": (edit("sigma0 = 0.5", "sigma0 = -1"), r"sigma0"),
    "hyperparameter of wrong type": (edit("sigma0 = 0.5", 'sigma0 = "0.5"'), r"sigma0 must be a number"),
    "unknown sampler key": (edit("num_draws = 20", "num_draws = 20\nnum_samples = 5"), r"\[sampler\] unknown key 'num_samples'"),
    "sampler value of wrong type": (edit("num_draws = 20", 'num_draws = "20"'), r"num_draws must be an integer"),
    "sampler value bool": (edit("num_chains = 4", "num_chains = true"), r"num_chains must be an integer"),
    "sampler float": (edit("num_warmup = 10", "num_warmup = 10.5"), r"num_warmup must be an integer"),
    "sampler value too small": (edit("num_draws = 20", "num_draws = 0"), r"num_draws must be an integer >= 1"),
    "negative seed": (edit("seed = 1", "seed = -3"), r"seed must be an integer >= 0"),
    "missing [model]": (BASE[BASE.index("[data]") :], r"missing required section \[model\]"),
    "missing [sampler]": (BASE[: BASE.index("[sampler]")], r"missing required section \[sampler\]"),
    "missing [data]": (edit('[data]\ndataset = "body_temperature"\ncolumn = "temperature_f"\n', ""), r"missing required section \[data\]"),
    "unknown section": (BASE + "\n[extra]\nx = 1\n", r"unknown section \[extra\]"),
    "section not a table": ("data = 3\n" + edit('[data]\ndataset = "body_temperature"\ncolumn = "temperature_f"\n', ""), r"\[data\] must be a table"),
    "unknown dataset": (edit('"body_temperature"', '"body_temp"'), r"unknown dataset 'body_temp'"),
    "unknown column": (edit('"temperature_f"', '"temp"'), r"column 'temp' not in.*temperature_f"),
    "no data source": (edit('dataset = "body_temperature"\n', ""), r"exactly one of dataset, file, values"),
    "two data sources": (edit('column = "temperature_f"', 'column = "temperature_f"\nvalues = [1.0]'), r"exactly one of .*found dataset, values"),
    "unknown data key": (edit('column = "temperature_f"', 'column = "temperature_f"\ncolumns = "x"'), r"\[data\] unknown key 'columns'"),
    "values not numbers": (edit('dataset = "body_temperature"\ncolumn = "temperature_f"', 'values = [1.0, "a"]'), r"values must be a list of numbers"),
    "data constructor error": (edit('dataset = "body_temperature"\ncolumn = "temperature_f"', "values = [1.0, nan]"), r"\[data\] y contains NaN"),
    "empty data": (edit('dataset = "body_temperature"\ncolumn = "temperature_f"', "values = []"), r"\[data\] y is empty"),
    "missing data file": (edit('dataset = "body_temperature"', 'file = "nowhere.csv"'), r"file not found: .*nowhere\.csv"),
    "unknown output key": (BASE + '\n[output]\nfile = "x.nc"\n', r"\[output\] unknown key 'file'"),
    "bivariate bad rho": (edit("rho = 0.8", "rho = 1.5", BIVARIATE), r"rho"),
    "bivariate with data": (BIVARIATE + "\n[data]\nvalues = [1.0]\n", r"\[data\] model normal\.bivariate takes no data"),
    "init wrong length": (edit("x1 = [2.5, -2.5, 2.5, -2.5]", "x1 = [2.5, -2.5]", BIVARIATE), r"\[sampler\.init\] x1 has 2 values, but num_chains = 4"),
    "init not numbers": (edit("x1 = [2.5, -2.5, 2.5, -2.5]", 'x1 = ["a", 1, 2, 3]', BIVARIATE), r"\[sampler\.init\] x1 must hold numbers"),
    "init not a list": (edit("x1 = [2.5, -2.5, 2.5, -2.5]", "x1 = 2.5", BIVARIATE), r"\[sampler\.init\] x1 must be a list"),
    "toml syntax": (edit("mu0 = 98.6", "mu0 = = 98.6"), r"invalid TOML"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_config_errors_name_the_key(tmp_path, case):
    text, pattern = ERROR_CASES[case]
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=pattern) as info:
        load_config(path)
    assert isinstance(info.value, ConfigError)
    assert "\n" not in str(info.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(ValueError, match=r"config file not found: .*nothing\.toml"):
        load_config(tmp_path / "nothing.toml")


def test_config_path_is_directory(tmp_path):
    with pytest.raises(ValueError, match="directory"):
        load_config(tmp_path)


# ----------------------------------------------------------------------------- data sources
def test_inline_values(tmp_path):
    text = edit('dataset = "body_temperature"\ncolumn = "temperature_f"', "values = [98.0, 98.5, 99.0]")
    c = load_config(write(tmp_path, text))
    np.testing.assert_allclose(np.asarray(c.data.y), [98.0, 98.5, 99.0])
    assert abs(float(c.data.ybar) - 98.5) < 1e-5


def test_csv_file_relative_to_config(tmp_path, monkeypatch):
    sub = tmp_path / "jobs"
    sub.mkdir()
    (sub / "temps.csv").write_text("id,temp\n1,97.5\n2,98.5\n3,99.5\n\n", encoding="utf-8")
    text = edit('dataset = "body_temperature"\ncolumn = "temperature_f"', 'file = "temps.csv"\ncolumn = "temp"')
    path = write(sub, text)
    monkeypatch.chdir(tmp_path)  # the path resolves against the config's folder, not the cwd
    c = load_config(Path("jobs") / "job.toml")
    np.testing.assert_allclose(np.asarray(c.data.y), [97.5, 98.5, 99.5])
    assert path.exists()


def test_csv_single_column_needs_no_column_key(tmp_path):
    (tmp_path / "y.csv").write_text("y\n1.0\n3.0\n", encoding="utf-8")
    text = edit('dataset = "body_temperature"\ncolumn = "temperature_f"', 'file = "y.csv"')
    c = load_config(write(tmp_path, text))
    assert float(c.data.ybar) == 2.0


@pytest.mark.parametrize(
    "csv_text, column, pattern",
    [
        ("a,b\n1,2\n", None, r"column is required.*a, b"),
        ("a,b\n1,x\n", '"b"', r"column 2 of 2 has a missing or non-numeric value"),
        ("a\n1\n", '"c"', r"column 'c' not in"),
    ],
)
def test_csv_errors(tmp_path, csv_text, column, pattern):
    (tmp_path / "d.csv").write_text(csv_text, encoding="utf-8")
    data = 'file = "d.csv"' + (f"\ncolumn = {column}" if column else "")
    text = edit('dataset = "body_temperature"\ncolumn = "temperature_f"', data)
    with pytest.raises(ValueError, match=pattern):
        load_config(write(tmp_path, text))


def test_read_column_directly():
    from gibbsjax.sources import read_column

    y = read_column({"dataset": "body_temperature", "column": "heart_rate"}, Path("."))
    assert y.shape == (130,) and y.dtype == np.float64


# ----------------------------------------------------------------------------- registry
def test_unknown_model_lists_known_names():
    with pytest.raises(ValueError) as info:
        parse_config(tomllib.loads(edit('"normal.semiconjugate"', '"no_such_model"')))
    for name in cfg.known_models():
        assert name in str(info.value)


def test_register_model():
    from gibbsjax.models import normal

    def shifted(rho, scale=1.0):  # rho has no default: required in the config
        if scale <= 0:
            raise ValueError(f"scale must be positive, got {scale}")
        return normal.bivariate(rho)

    register_model(ModelSpec("toy.shifted", shifted, description="test model"))
    try:
        assert "toy.shifted" in cfg.known_models()
        with pytest.raises(ValueError, match="already registered"):
            register_model(ModelSpec("toy.shifted", shifted))
        with pytest.raises(ValueError, match="factory"):
            ModelSpec("toy.bad", "no_colon_here")
        with pytest.raises(ValueError, match="ModelSpec"):
            register_model("toy.bad")

        doc = tomllib.loads(edit('"normal.bivariate"', '"toy.shifted"', BIVARIATE))
        c = parse_config(doc)
        assert c.model == "toy.shifted" and c.hyperparameters == {"rho": 0.8, "scale": 1.0}

        del doc["model"]["rho"]
        with pytest.raises(ValueError, match="missing hyperparameter 'rho'"):
            parse_config(doc)
        doc["model"].update(rho=0.5, scale=-1.0)
        with pytest.raises(ValueError, match=r"\[model\] scale must be positive"):
            parse_config(doc)
    finally:
        cfg.MODELS.remove("toy.shifted")
    with pytest.raises(ValueError, match="built-in"):
        cfg.MODELS.remove("normal.bivariate")


def test_old_model_names_still_read():
    """Results and configs of gibbsjax 0.1 named models differently; they still resolve."""
    assert cfg.get_spec("lda").name == "lda.partially_collapsed"
    assert cfg.get_spec("mixture.unigrams").name == "mixtures.unigrams"
    assert "lda" not in cfg.known_models()


def test_every_kernel_name_is_its_registry_name():
    """One naming convention: registry name = "<module>.<factory>" = the kernel's name."""
    for name in cfg.known_models():
        spec = cfg.get_spec(name)
        # the model's module under gibbsjax.models; a package's modules count as the package (lda.kernels: lda)
        module = spec.factory.__module__.removeprefix("gibbsjax.models.").split(".")[0]
        assert name == f"{module}.{spec.factory.__name__}"
        hyper = {"K": 2} if "K" in cfg.hyperparameters_of(spec.factory, {}) or name.startswith("lda") else {}
        assert spec.factory(**hyper).name == name


# ----------------------------------------------------------------------------- running
def test_run_config_attrs_and_overrides(tmp_path):
    path = write(tmp_path, BIVARIATE, "bv.toml")
    c = load_config(path)
    idata = run_config(c, progress=False, seed=7, chunk_size=3)
    assert idata.posterior["x1"].shape == (4, 10)
    attrs = idata.attrs
    assert attrs["model"] == "normal.bivariate"
    assert attrs["model_rho"] == 0.8
    assert attrs["config_file"] == str(path)
    assert attrs["seed"] == 7
    assert attrs["interrupted"] == 0
    assert "rho = 0.8" in attrs["config_toml"]
    for value in attrs.values():
        assert isinstance(value, (str, int, float, np.integer, np.floating)) and not isinstance(value, bool)
    # the same seed from the config gives the same draws whatever the chunking
    again = run_config(c, progress=False, seed=7)
    np.testing.assert_array_equal(idata.posterior["x1"].values, again.posterior["x1"].values)
    other = run_config(c, progress=False)  # the config's seed, 1
    assert other.attrs["seed"] == 1
    assert not np.array_equal(idata.posterior["x1"].values, other.posterior["x1"].values)


def test_run_config_rejects_bad_overrides(tmp_path):
    c = load_config(write(tmp_path, BIVARIATE))
    with pytest.raises(ValueError, match="seed"):
        run_config(c, seed=-1, progress=False)
    with pytest.raises(ValueError, match="chunk_size"):
        run_config(c, chunk_size=0, progress=False)


def test_shipped_bivariate_config_converges():
    """4 chains from the corners: R-hat < 1.01, bulk ESS > 400, moments of N(0, [[1, .8], [.8, 1]])."""
    import arviz as az

    idata = run_config(load_config(CONFIGS / "bivariate-normal.toml"), progress=False)
    table = az.summary(idata, var_names=["x1", "x2"])
    assert (table["r_hat"] < 1.01).all(), table
    assert (table["ess_bulk"] > 400).all(), table
    x1 = idata.posterior["x1"].values.ravel()
    x2 = idata.posterior["x2"].values.ravel()
    assert abs(x1.mean()) < 0.2 and abs(x2.mean()) < 0.2
    assert abs(np.corrcoef(x1, x2)[0, 1] - 0.8) < 0.05


def test_docstring_example_is_a_working_config(tmp_path):
    """The format documented in gibbsjax.config's docstring loads and runs."""
    doc = cfg.__doc__
    block = doc[doc.index(".. code-block:: toml") :].split("\n\n", 1)[1]
    block = block[: block.index("\nSections ")]
    text = textwrap.dedent(block)
    text = text.replace("num_warmup = 1000", "num_warmup = 10").replace("num_draws = 2000", "num_draws = 20")
    c = load_config(write(tmp_path, text))
    assert c.model == "normal.semiconjugate" and c.sampler.init == {"mu": [97.0, 99.5, 97.0, 99.5]}
    idata = run_config(c, progress=False)
    assert idata.posterior["mu"].shape == (4, 20)


def test_postprocess_and_report_hooks(tmp_path, capsys):
    """A registered model's postprocess runs after sampling; its report is printed by the CLI."""
    from gibbsjax import config as cfg
    from gibbsjax.cli import main

    def postprocess(idata, kernel, data, extras):
        idata.attrs["post_mean_x1"] = float(idata.posterior["x1"].mean())
        return idata

    def report(idata):
        return f"REPORT mean x1 = {idata.attrs['post_mean_x1']:.3f}"

    from gibbsjax.models import normal

    cfg.register_model(ModelSpec("test.hooked", normal.bivariate, postprocess=postprocess, report=report,
                                 summary_vars=("x1",)), replace=True)
    try:
        path = tmp_path / "hooked.toml"
        path.write_text('[model]\nname = "test.hooked"\nrho = 0.5\n[sampler]\nseed = 1\nnum_draws = 50\nnum_warmup = 10\n')
        out = tmp_path / "hooked.nc"
        assert main(["run", str(path), "--out", str(out), "--no-progress"]) == 0
        text = capsys.readouterr().out
        assert "REPORT mean x1 = " in text
        table_lines = [line.split()[0] for line in text.splitlines() if line.strip()]
        assert "x1" in table_lines and "x2" not in table_lines  # summary_vars respected
        assert main(["summary", str(out)]) == 0
        assert "REPORT mean x1" in capsys.readouterr().out  # report from the saved file
        with pytest.raises(ValueError, match="postprocess"):
            ModelSpec("test.bad", normal.bivariate, postprocess=3)
    finally:
        cfg.MODELS.remove("test.hooked")


def test_folder_corpus_takes_a_token_pattern(tmp_path):
    """A folder of texts in a config: words are the matches of token_pattern (default scikit-learn's,
    one-character tokens dropped); the key is refused with other sources, a bad regex is named."""
    from gibbsjax.sources import read_corpus

    docs = tmp_path / "docs"
    for label, name, text in (("fruit", "a.txt", "x = apple + 2 banana"), ("other", "b.txt", "a banana, a cherry")):
        (docs / label).mkdir(parents=True)
        (docs / label / name).write_text(text, encoding="utf-8")
    section = {"file": "docs", "format": "folder"}
    assert read_corpus(section, tmp_path).vocab == ("apple", "banana", "cherry")
    assert read_corpus({**section, "token_pattern": r"\w+"}, tmp_path).vocab == (
        "2", "a", "apple", "banana", "cherry", "x")
    with pytest.raises(ConfigError, match=r"\[data\] token_pattern '\(' is not a regular expression"):
        read_corpus({**section, "token_pattern": "("}, tmp_path)
    with pytest.raises(ConfigError, match="token_pattern goes with file, not with corpus"):
        read_corpus({"corpus": "abc", "token_pattern": r"\w+"}, tmp_path)
    (tmp_path / "c.ldac").write_text("1 0:1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="token_pattern goes with format folder"):
        read_corpus({"file": "c.ldac", "format": "ldac", "token_pattern": r"\w+"}, tmp_path)
