//! zkstep-benches: criterion benches (`cargo bench -p zkstep-benches`) and
//! shared helpers for them. Benchmarks measure; tests never time anything.
