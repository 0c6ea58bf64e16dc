//! The global pool built lazily takes its size from `RAYON_NUM_THREADS`.
//! One test in this binary: it sets the variable before anything reads it.

#[test]
fn rayon_num_threads_sizes_the_lazy_global_pool() {
    std::env::set_var("RAYON_NUM_THREADS", "3");
    assert_eq!(rayon_core::current_num_threads(), 3);
    assert_eq!(rayon_core::broadcast(|ctx| ctx.num_threads()), [3, 3, 3]);
    // Built now: a later configuration is refused.
    assert!(rayon_core::ThreadPoolBuilder::new().build_global().is_err());
}
