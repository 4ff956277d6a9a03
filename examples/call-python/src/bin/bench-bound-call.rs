//! A macro-bound call versus the same call made through the runtime's call API directly
//! (`Call::from_json` + `AnyExecutor`, the path `apizr execute` and the servers use), in one
//! run, interleaved (the order alternates every round), for the warm pool and a strict v1
//! policy. Prints one line per mode: medians in microseconds and bound / API as a ratio.
//! Run by `scripts/bench-macros` (release build).
//!
//! `bench-bound-call [ROUNDS_DIRECT] [ROUNDS_STRICT]` (defaults 2000 and 40).

use std::time::{Duration, Instant};

use apizr_runtime::__private::Registration;
use apizr_runtime::CallError;
use apizr_runtime::call::{AnyExecutor, Call};
use apizr_runtime::ir::policy::AnyPolicy;
use apizr_runtime::pool::executor::DirectExecutor;
use apizr_runtime::pool::{PoolConfig, SetResults};
use apizr_runtime::{Executable, LauncherLocation, RuntimeConfig};

/// The warm pool.
#[apizr_runtime::python(file = "py/pricing.py", mode = "direct")]
fn total(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, CallError>;

/// A fresh sandboxed process per call.
#[apizr_runtime::python(
    file = "py/pricing.py",
    function = "total",
    policy = "policies/strict.json"
)]
fn total_strict(prices: Vec<f64>, tax: Option<f64>) -> Result<f64, CallError>;

const ARGUMENTS: &[u8] = br#"{"prices": [10.0, 8.0], "tax": 0.2}"#;

type Failure = Box<dyn std::error::Error>;

/// The runtime-API side: what the binding embeds, prepared once, as an API user would.
struct Direct {
    contract: apizr_runtime::ir::interface::InvocationContract,
    executable: Executable,
    module: String,
    executor: AnyExecutor,
}

impl Direct {
    fn call(&self) -> Result<f64, Failure> {
        let call = Call::from_json(
            &self.contract,
            self.executable.clone(),
            self.module.clone(),
            ARGUMENTS,
        )?;
        let outcome = self.executor.execute(&call);
        if outcome.status != apizr_runtime::Status::Success {
            return Err(format!("{:?}", outcome.status).into());
        }
        // The same decoding as the binding's: the exact JSON text when the backend kept it.
        Ok(match &outcome.value_json {
            Some(text) => serde_json::from_slice(text)?,
            None => serde_json::from_value(serde_json::to_value(&outcome.value)?)?,
        })
    }
}

fn api_side(registration: &Registration, strict: bool) -> Result<Direct, Failure> {
    let Registration::Python(binding) = registration else {
        return Err("not a binding".into());
    };
    let value = apizr_runtime::ir::json::parse(
        binding.contract.as_bytes(),
        apizr_runtime::ir::json::Dialect::Strict,
    )?;
    let contract = apizr_runtime::serve::decode::contract(&value)?;
    let executable = Executable::new(binding.executable().to_vec());
    let executor = if strict {
        let policy = AnyPolicy::from_slice(include_bytes!("../../policies/strict.json"))?;
        let config = RuntimeConfig {
            launcher: LauncherLocation::CurrentExe,
            ..RuntimeConfig::default()
        };
        AnyExecutor::for_policy(policy, config, None)?
    } else {
        let direct = DirectExecutor::start_blocking(PoolConfig {
            python: RuntimeConfig::default().python,
            workers: 2,
            timeout: None,
            executable: executable.clone(),
            module: binding.module.to_string(),
            path: format!("source/{}.py", binding.module),
            capabilities: vec![contract.clone()],
            sets: SetResults::ToList,
        })?;
        AnyExecutor::Direct(std::sync::Arc::new(direct))
    };
    Ok(Direct {
        contract,
        executable,
        module: binding.module.to_string(),
        executor,
    })
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}

fn measure(
    label: &str,
    rounds: usize,
    bound: fn(Vec<f64>, Option<f64>) -> Result<f64, CallError>,
    api: &Direct,
) -> Result<(), Failure> {
    // Warm both sides (pool start, first-call preparation).
    for _ in 0..3 {
        bound(vec![10.0, 8.0], Some(0.2))?;
        api.call()?;
    }
    let (mut bound_times, mut api_times) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for side in [round % 2, 1 - round % 2] {
            let start = Instant::now();
            let value = if side == 0 {
                bound(vec![10.0, 8.0], Some(0.2))?
            } else {
                api.call()?
            };
            let took = start.elapsed();
            if (value - 21.6).abs() > 1e-9 {
                return Err(format!("{label}: unexpected value {value}").into());
            }
            if side == 0 {
                bound_times.push(took);
            } else {
                api_times.push(took);
            }
        }
    }
    let (b, a) = (median(bound_times), median(api_times));
    println!(
        "{label}: rounds {rounds}, bound median {b:.1} us, runtime API median {a:.1} us, \
         bound/API {:.3}",
        b / a
    );
    Ok(())
}

fn main() -> Result<(), Failure> {
    apizr_runtime::init();
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let direct_rounds = args.next().transpose()?.unwrap_or(2000);
    let strict_rounds = args.next().transpose()?.unwrap_or(40);
    let registrations = apizr_runtime::capabilities![total, total_strict];
    measure(
        "direct (warm pool)",
        direct_rounds,
        total,
        &api_side(&registrations[0], false)?,
    )?;
    measure(
        "strict v1 (fresh process)",
        strict_rounds,
        total_strict,
        &api_side(&registrations[1], true)?,
    )?;
    Ok(())
}
