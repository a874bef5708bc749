//! PyO3 glue only: scenario text in, plain columns out. The Python package `tpsim` builds
//! DataFrames, files and figures from what these functions return.

mod parquet_sink;

use parquet_sink::{write_table, ParquetSink};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::collections::HashMap;
use std::io::{self, BufWriter, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tpsim_engine::{Column, RunOptions, RunResult, Streams, Table, World};
use tpsim_scenario::ScenarioError as RsScenarioError;

create_exception!(
    _tpsim,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be read or is not valid."
);
create_exception!(
    _tpsim,
    RunLimitError,
    PyRuntimeError,
    "A run stopped because it exceeded a limit the user set (wall-clock time)."
);

/// An I/O error on one file, carried inside an `io::Error` (whose kind it keeps) so that the
/// engine's streams pass it through; [`os_error`] makes it Python's `OSError` naming the file.
#[derive(Debug)]
pub struct FileError {
    path: PathBuf,
    source: io::Error,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for FileError {}

/// `e`, naming the file `path` it happened on.
pub fn file_error(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        FileError {
            path: path.to_path_buf(),
            source: e,
        },
    )
}

/// Python's `OSError(errno, strerror[, filename])` for `e`, so that callers tell a full disk
/// or an unwritable directory (the environment's problem, ending a sweep) from a failed run.
fn os_error(e: &io::Error) -> PyErr {
    let named = e.get_ref().and_then(|r| r.downcast_ref::<FileError>());
    let inner = named.map_or(e, |f| &f.source);
    let errno = inner.raw_os_error().unwrap_or(match inner.kind() {
        io::ErrorKind::StorageFull => 28,
        io::ErrorKind::PermissionDenied => 13,
        io::ErrorKind::NotFound => 2,
        _ => 5, // EIO
    });
    let text = inner.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    match named {
        Some(f) => PyOSError::new_err((errno, text, f.path.display().to_string())),
        None => PyOSError::new_err((errno, text)),
    }
}

/// A file writer whose errors name the file.
struct NamedWriter {
    path: PathBuf,
    inner: BufWriter<std::fs::File>,
}

impl Write for NamedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).map_err(|e| file_error(&self.path, e))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| file_error(&self.path, e))
    }
}

fn scenario_err(py: Python<'_>, e: RsScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let diags = PyList::empty(py);
    for d in &e.diagnostics {
        let item = PyDict::new(py);
        let _ = item.set_item("path", &d.path);
        let _ = item.set_item("line", d.line);
        let _ = item.set_item("column", d.column);
        let _ = item.set_item("message", &d.message);
        let _ = diags.append(item);
    }
    let _ = err.value(py).setattr("diagnostics", diags);
    let _ = err.value(py).setattr("source", &e.source);
    err
}

/// Reads and validates a scenario; returns it with every default resolved, as JSON.
///
/// Raises `ScenarioError` (a `ValueError`) with `.diagnostics`: a list of
/// `{path, line, column, message}`.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>"))]
fn resolve(py: Python<'_>, text: &str, source: &str) -> PyResult<String> {
    tpsim_scenario::load(text, source)
        .map(|s| s.resolved_json())
        .map_err(|e| scenario_err(py, e))
}

/// Returns `text` with each ns-2 `file = "..."` reference (mobility, traffic) replaced by the
/// file's content as `text = "..."` on one line (relative paths from `source`'s directory).
/// Raises `ScenarioError` naming the key when a file cannot be read.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>"))]
fn embed_files(py: Python<'_>, text: &str, source: &str) -> PyResult<String> {
    tpsim_scenario::import::embed_files(text, source).map_err(|e| scenario_err(py, e))
}

/// Converts an ns-2 movement file (and optionally a traffic file) into a tpsim scenario (TOML
/// text); see `tpsim import-ns2`. Raises `ValueError` naming the file and line of a malformed
/// line.
#[pyfunction]
#[pyo3(signature = (movement, traffic = None, movement_name = "movement file", traffic_name = None, first_id = None, duration_s = None))]
fn ns2_to_toml(
    movement: &str,
    traffic: Option<&str>,
    movement_name: &str,
    traffic_name: Option<&str>,
    first_id: Option<u32>,
    duration_s: Option<f64>,
) -> PyResult<String> {
    tpsim_scenario::import::ns2_to_toml(movement, traffic, (movement_name, traffic_name), first_id, duration_s)
        .map_err(pyo3::exceptions::PyValueError::new_err)
}

/// Events the engine runs between two checks for an interrupt or the time limit (a few
/// milliseconds of simulation).
const SLICE_EVENTS: u64 = 1 << 17;

fn engine_bug(panic: Box<dyn std::any::Any + Send>) -> PyErr {
    PyRuntimeError::new_err(format!(
        "internal engine error (a tpsim bug, please report it): {}",
        panic_message(&panic)
    ))
}

/// Outputs a run can write to files instead of returning them (`run`'s `files`).
const FILE_OUTPUTS: [&str; 5] = ["trace", "ns2", "acks", "timeseries", "animation"];

/// The files of `files` that the run will write: the outputs the scenario produces
/// (`timeseries` always, without rows under `[output] timeseries = false`; `trace` with
/// `trace` or `ns2_trace`; `ns2` with `ns2_trace`; `acks` with `ack_samples`; `animation`
/// with `animation`).
fn produced(sc: &tpsim_scenario::Scenario, files: HashMap<String, PathBuf>) -> PyResult<HashMap<String, PathBuf>> {
    let mut out = HashMap::new();
    for (kind, path) in files {
        let made = match kind.as_str() {
            "trace" => sc.output.keeps_trace(),
            "ns2" => sc.output.ns2_trace.is_some(),
            "acks" => sc.output.ack_samples,
            "timeseries" => true,
            "animation" => sc.output.animation,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "files: unknown output {kind:?}; expected one of {}",
                    FILE_OUTPUTS.join(", ")
                )))
            }
        };
        if made {
            out.insert(kind, path);
        }
    }
    Ok(out)
}

/// The streams of the outputs in `files` that grow while the run goes.
fn streams(files: &HashMap<String, PathBuf>) -> PyResult<Streams> {
    let mut s = Streams::default();
    if let Some(p) = files.get("trace") {
        s.trace = Some(Box::new(ParquetSink::new(p)));
    }
    if let Some(p) = files.get("acks") {
        s.acks = Some(Box::new(ParquetSink::new(p)));
    }
    if let Some(p) = files.get("ns2") {
        let f = std::fs::File::create(p).map_err(|e| os_error(&file_error(p, e)))?;
        s.ns2 = Some(Box::new(NamedWriter {
            path: p.clone(),
            inner: BufWriter::with_capacity(1 << 16, f),
        }));
    }
    Ok(s)
}

/// Runs one replication of a scenario and returns its tables as plain columns.
///
/// Returns a dict: `flows` (dict of equal-length lists, one entry per flow direction),
/// `network` (dict of scalars), `timeseries` (dict of lists, long format), with
/// `[output] trace = true` `trace` (dict of lists, one entry per packet event), with
/// `[output] ns2_trace` also `trace` (with the ns-2 rows and columns) and `ns2_trace` (the
/// format: "old", "new" or "wired"), with `[output] animation = true` `animation` (dict of
/// lists: the network movie's trace), with `[output] ack_samples = true` `acks` (dict of lists,
/// one entry per acknowledgement), `engine_seconds` (wall time of the event loop, s) and
/// `files` (below).
///
/// `files` maps outputs to file paths: `trace`, `acks`, `timeseries`, `animation` (Parquet)
/// and `ns2` (the ns-2 trace text). Each output the scenario produces and `files` names is
/// written there instead of being returned, the trace, its ns-2 text and the per-ACK samples
/// while the run goes (the engine holds one batch of their rows at a time), the others at
/// its end; the returned `files` lists what was written (a subset of `files`). The Parquet
/// columns have the engine's types (unsigned 64-bit counts, 32-bit indices); the caller casts
/// them to the documented ones.
///
/// The GIL is released while the engine
/// runs; between slices of events the run checks for signals (Ctrl-C raises
/// `KeyboardInterrupt` within milliseconds) and for `max_wall_s`, and calls `progress(now_s,
/// end_s)` (simulated seconds reached and at the end) at most every 0.2 s of wall time if
/// given (an exception it raises stops the run and propagates). Raises `ScenarioError` for
/// an invalid scenario, `ValueError` for an unknown output in `files`, `RunLimitError` when
/// the run exceeds `max_wall_s` seconds of wall time, `OSError` (errno, message and, where
/// known, the file) when a pcap or output file cannot be written, and `RuntimeError` for an
/// engine bug.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", seed = None, run = 0, pcap_dir = None, max_wall_s = None, progress = None, files = None))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, one per option
fn run(
    py: Python<'_>,
    text: &str,
    source: &str,
    seed: Option<u64>,
    run: u64,
    pcap_dir: Option<String>,
    max_wall_s: Option<f64>,
    progress: Option<PyObject>,
    files: Option<HashMap<String, PathBuf>>,
) -> PyResult<PyObject> {
    let sc = tpsim_scenario::load(text, source).map_err(|e| scenario_err(py, e))?;
    let files = produced(&sc, files.unwrap_or_default())?;
    let opts = RunOptions {
        seed: seed.unwrap_or(sc.simulation.seed),
        run,
        pcap_dir: pcap_dir.map(Into::into),
    };
    let mut world = match py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| World::build(&sc, &opts)))) {
        Ok(Ok(w)) => w,
        Ok(Err(e)) => return Err(os_error(&e.into())),
        Err(panic) => return Err(engine_bug(panic)),
    };
    world.stream(streams(&files)?);
    let t0 = Instant::now();
    let mut reported = t0;
    // Division by 1e9 rounds correctly: a 1000 s run ends at 1000.0, not 1000.0000000000001.
    let secs = |ns: u64| ns as f64 / 1e9;
    let end_s = secs(world.end().0);
    loop {
        let done = py
            .allow_threads(|| catch_unwind(AssertUnwindSafe(|| world.run_for(SLICE_EVENTS))))
            .map_err(engine_bug)?;
        if done {
            break;
        }
        py.check_signals()?;
        if let Some(cb) = &progress {
            if reported.elapsed().as_secs_f64() >= 0.2 {
                reported = Instant::now();
                cb.call1(py, (secs(world.now().0), end_s))?;
            }
        }
        let elapsed = t0.elapsed().as_secs_f64();
        if max_wall_s.is_some_and(|m| elapsed > m) {
            return Err(RunLimitError::new_err(format!(
                "run stopped: its wall-clock limit of {} s was reached at simulated time {:.3} s",
                max_wall_s.unwrap_or_default(),
                world.now().as_secs_f64()
            )));
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let result = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| -> io::Result<RunResult> {
            let mut r = world.results(secs)?;
            write_at_end(&mut r, &files)?;
            Ok(r)
        }))
    });
    match result {
        Ok(Ok(r)) => to_py(py, &r, sc.output.ns2_trace, &files),
        Ok(Err(e)) => Err(os_error(&e)),
        Err(panic) => Err(engine_bug(panic)),
    }
}

/// Writes the outputs made at the end of the run (time series, the movie's trace) that
/// `files` names, and drops them from `r`.
fn write_at_end(r: &mut RunResult, files: &HashMap<String, PathBuf>) -> std::io::Result<()> {
    if let Some(p) = files.get("timeseries") {
        write_table(&r.series_table(), p)?;
        r.timeseries = Default::default();
    }
    if let Some(p) = files.get("animation") {
        if let Some(t) = r.animation.take() {
            write_table(&t, p)?;
        }
    }
    Ok(())
}

/// The memory one run of the scenario `text` would need, by part: a list of (part, bytes)
/// pairs (see `tpsim_engine::memory`). Raises `ScenarioError` for an invalid scenario.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>"))]
fn estimate_memory(py: Python<'_>, text: &str, source: &str) -> PyResult<Vec<(&'static str, u64)>> {
    let sc = tpsim_scenario::load(text, source).map_err(|e| scenario_err(py, e))?;
    Ok(tpsim_engine::memory::estimate_memory(&sc).parts)
}

/// A lower bound of `estimate_memory` from `text` alone, without parsing it (its flows,
/// counted from the TOML tokens): a list of (part, bytes) pairs. Never raises for malformed
/// text: the parse that follows reports it.
#[pyfunction]
fn estimate_memory_floor(py: Python<'_>, text: &str) -> Vec<(&'static str, u64)> {
    py.allow_threads(|| tpsim_engine::memory::estimate_memory_floor(text).parts)
}

/// Returns `text` with `overrides` (a JSON list of `[dotted path, value]` pairs) set, and
/// without its `[sweep]` table if `drop_sweep`. Comments and layout elsewhere are kept.
///
/// Raises `ScenarioError` for a path that does not exist in the file or malformed TOML.
#[pyfunction]
#[pyo3(signature = (text, overrides_json, source = "<string>", drop_sweep = true))]
fn apply_overrides(
    py: Python<'_>,
    text: &str,
    overrides_json: &str,
    source: &str,
    drop_sweep: bool,
) -> PyResult<String> {
    let pairs: Vec<(String, serde_json::Value)> = serde_json::from_str(overrides_json)
        .map_err(|e| PyValueError::new_err(format!("overrides must be a JSON list of [path, value] pairs: {e}")))?;
    tpsim_scenario::apply_overrides(text, source, &pairs, drop_sweep).map_err(|e| scenario_err(py, e))
}

/// Panics inside the engine boundary, to test that a Rust panic reaches Python as a
/// `RuntimeError` and never as a crash. Not part of the API.
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    match catch_unwind(|| -> () { panic!("deliberate test panic") }) {
        Ok(()) => Ok(()),
        Err(p) => Err(PyRuntimeError::new_err(format!(
            "internal engine error (a tpsim bug, please report it): {}",
            panic_message(&p)
        ))),
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// The reference study scenarios compiled into the package: a list of (file name, text), so
/// that `tpsim study` works from any directory.
#[pyfunction]
fn bundled_scenarios() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "study-a-sensor-interval.toml",
            include_str!("../../../scenarios/study-a-sensor-interval.toml"),
        ),
        (
            "study-b-olsr-speed.toml",
            include_str!("../../../scenarios/study-b-olsr-speed.toml"),
        ),
        (
            "study-c-manet-speed.toml",
            include_str!("../../../scenarios/study-c-manet-speed.toml"),
        ),
        (
            "study-d-wired-voip.toml",
            include_str!("../../../scenarios/study-d-wired-voip.toml"),
        ),
        (
            "study-e-sctp-streams-window.toml",
            include_str!("../../../scenarios/study-e-sctp-streams-window.toml"),
        ),
        (
            "study-f-cc-aqm.toml",
            include_str!("../../../scenarios/study-f-cc-aqm.toml"),
        ),
    ]
}

/// The scenario format's unit families: `{family: (SI unit, {unit: factor})}`, the factor
/// being the value in the SI unit of 1 of the unit (units that do not scale linearly, dBm,
/// are left out).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn unit_families() -> Vec<(&'static str, &'static str, Vec<(&'static str, f64)>)> {
    tpsim_scenario::units::FAMILIES
        .iter()
        .map(|(name, si, f)| (*name, *si, f.linear_units(si)))
        .collect()
}

/// The JSON Schema of the scenario format.
#[pyfunction]
fn json_schema() -> String {
    tpsim_scenario::json_schema()
}

/// A table as a dict of equal-length lists (one-row tables as a dict of scalars if `scalar`).
fn table_to_py<'py>(py: Python<'py>, t: &Table, scalar: bool) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        match (col, scalar) {
            (Column::U64(v), false) => d.set_item(name, v)?,
            (Column::OptU32(v), false) => d.set_item(name, v)?,
            (Column::F64(v), false) => d.set_item(name, v)?,
            (Column::Text(v), false) => d.set_item(name, v)?,
            (Column::OptText(v), false) => d.set_item(name, v)?,
            (Column::Bool(v), false) => d.set_item(name, v)?,
            (Column::U64(v), true) => d.set_item(name, v[0])?,
            (Column::OptU32(v), true) => d.set_item(name, v[0])?,
            (Column::F64(v), true) => d.set_item(name, v[0])?,
            (Column::Text(v), true) => d.set_item(name, v[0])?,
            (Column::OptText(v), true) => d.set_item(name, v[0])?,
            (Column::Bool(v), true) => d.set_item(name, v[0])?,
        }
    }
    Ok(d)
}

fn to_py(
    py: Python<'_>,
    r: &RunResult,
    ns2: Option<tpsim_scenario::Ns2Trace>,
    files: &HashMap<String, PathBuf>,
) -> PyResult<PyObject> {
    let out = PyDict::new(py);
    out.set_item("flows", table_to_py(py, &r.flows_table(), false)?)?;
    out.set_item("network", table_to_py(py, &r.network_table(), true)?)?;
    if !files.contains_key("timeseries") {
        out.set_item("timeseries", table_to_py(py, &r.series_table(), false)?)?;
    }
    let written = PyDict::new(py);
    for (kind, path) in files {
        written.set_item(kind, path)?;
    }
    out.set_item("files", written)?;
    if let Some(t) = &r.trace {
        out.set_item("trace", table_to_py(py, t, false)?)?;
    }
    if let Some(f) = ns2 {
        let name = match f {
            tpsim_scenario::Ns2Trace::Old => "old",
            tpsim_scenario::Ns2Trace::New => "new",
            tpsim_scenario::Ns2Trace::Wired => "wired",
        };
        out.set_item("ns2_trace", name)?;
    }
    if let Some(t) = &r.animation {
        out.set_item("animation", table_to_py(py, t, false)?)?;
    }
    if let Some(t) = &r.acks {
        out.set_item("acks", table_to_py(py, t, false)?)?;
    }
    out.set_item("engine_seconds", r.engine_seconds)?;
    Ok(out.into())
}

/// The compiled engine module of tpsim.
#[pymodule]
fn _tpsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("RunLimitError", m.py().get_type::<RunLimitError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The build fingerprint (build.rs): stored runs are keyed on it.
    m.add("__build__", env!("TPSIM_BUILD_ID"))?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory_floor, m)?)?;
    m.add_function(wrap_pyfunction!(unit_families, m)?)?;
    m.add_function(wrap_pyfunction!(json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(apply_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(embed_files, m)?)?;
    m.add_function(wrap_pyfunction!(ns2_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
