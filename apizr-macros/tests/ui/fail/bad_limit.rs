/// Ping.
#[apizr_runtime::endpoint(wall_time = 1000, concurrency = 0)]
fn ping() -> u32 {
    1
}

fn main() {
    let _ = ping();
}
