//! `profile_random` with mimalloc as the global allocator: the same workload, to measure what
//! the allocator costs (malloc and free are about a fifth of a step's profile).

#[path = "profile_random.rs"]
mod random;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    random::main()
}
