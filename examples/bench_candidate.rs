//! One candidate of the failover benchmark, by hand: `cargo run --release --example
//! bench_candidate -- URL SERVICE NODE LEASE_MS`. It runs an `Elector` and prints `lead TERM T`
//! when it starts leading (see benches/election/candidate.rs for the protocol). The benchmark
//! itself runs the same code as `election --candidate ...`, from its own executable.

#[path = "../benches/election/candidate.rs"]
mod candidate;

fn main() {
    std::process::exit(candidate::main(std::env::args().skip(1).collect()));
}
