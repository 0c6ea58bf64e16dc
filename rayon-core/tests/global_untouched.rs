//! A program that runs everything in pools of its own never builds the
//! global pool: the free functions called inside those pools act on them,
//! so the global pool can still be configured afterwards. One test in this
//! binary, as the global pool is the process's.

use rayon_core::ThreadPoolBuilder;

#[test]
fn free_functions_inside_a_pool_leave_the_global_pool_unbuilt() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (send, recv) = std::sync::mpsc::channel();
    pool.install(|| {
        let (a, b) = rayon_core::join(|| 1, || 2);
        let threads = rayon_core::current_num_threads();
        rayon_core::scope(|s| s.spawn(|_| ()));
        rayon_core::spawn(move || send.send(a + b + threads).unwrap());
    });
    assert_eq!(recv.recv().unwrap(), 5);
    ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("the global pool was not built yet");
    assert_eq!(rayon_core::current_num_threads(), 1);
}
