//! `apizr-launch`: the runtime's launcher as a stand-alone binary (see
//! `apizr_runtime::launcher`). The supervisor re-execs it for every call.

fn main() {
    apizr_runtime::launcher::run_if_requested();
    let rest: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(apizr_runtime::launcher::main_with(&rest));
}
