//! Statistics over repetitions: median and min-max of a figure, and the
//! ratio of a peer to weft oriented so that > 1 always means weft did better.

/// Median, min and max of one (case, scheduler, workers) group.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

impl Spread {
    /// None for an empty sample; NaN values are ignored.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[v.len() - 1],
            count: v.len(),
        })
    }
}

/// How a peer compares with weft, > 1 meaning weft did better: peer / weft
/// for figures where lower is better (time, CPU), weft / peer otherwise.
/// None when the ratio would divide by zero.
pub fn ratio_vs_weft(peer: f64, weft: f64, higher_is_better: bool) -> Option<f64> {
    let (num, den) = if higher_is_better {
        (weft, peer)
    } else {
        (peer, weft)
    };
    (den > 0.0 && num.is_finite() && den.is_finite()).then(|| num / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_samples() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.count), (2.0, 1.0, 3.0, 3));
        let s = Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
    }

    #[test]
    fn empty_and_nan_samples() {
        assert_eq!(Spread::of(&[]), None);
        assert_eq!(Spread::of(&[f64::NAN]), None);
        assert_eq!(Spread::of(&[f64::NAN, 5.0]).unwrap().median, 5.0);
    }

    #[test]
    fn ratio_is_oriented_towards_weft() {
        // Peer takes twice as long: weft is 2x better.
        assert_eq!(ratio_vs_weft(200.0, 100.0, false), Some(2.0));
        // Peer reaches half weft's efficiency: weft is 2x better.
        assert_eq!(ratio_vs_weft(0.4, 0.8, true), Some(2.0));
        // Peer faster: below 1.
        assert_eq!(ratio_vs_weft(50.0, 100.0, false), Some(0.5));
        assert_eq!(ratio_vs_weft(1.0, 0.0, false), None);
    }
}
