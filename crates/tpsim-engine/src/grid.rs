//! A uniform grid over node positions, so that a transmission visits only the nodes that can
//! hear it: O(nodes in range) per frame instead of O(all nodes).
//!
//! Cells are squares of the carrier-sense range; a query for radius r visits the cells that
//! overlap the disk's bounding box and leaves the exact distance test to the caller. The
//! channel refills the grid when moving nodes may have left their cells
//! (`WifiChannel::refresh`). Cells are one flat array (counting sort), so a query walks
//! contiguous memory row by row.

/// Node indices bucketed by cell.
#[derive(Clone, Debug)]
pub struct Grid {
    cell_m: f64,
    x0: f64,
    y0: f64,
    cols: usize,
    rows: usize,
    /// Nodes of cell c: `items[start[c]..start[c + 1]]` (one flat array, cell by cell).
    start: Vec<u32>,
    items: Vec<u32>,
    /// The position each node of `items` had when the grid was filled, beside it: a query
    /// over static nodes reads positions as one contiguous stream, not one scattered access
    /// per candidate.
    at: Vec<(f64, f64)>,
}

impl Grid {
    /// Buckets `positions` (m) into square cells of side `cell_m` (> 0).
    pub fn new(positions: &[(f64, f64)], cell_m: f64) -> Grid {
        let cell_m = if cell_m.is_finite() && cell_m > 0.0 {
            cell_m
        } else {
            1.0
        };
        let (mut x0, mut y0, mut x1, mut y1) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        if let Some(&(x, y)) = positions.first() {
            (x0, y0, x1, y1) = (x, y, x, y);
        }
        for &(x, y) in positions {
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        // Cap the grid size: beyond ~4 cells per node the grid only costs memory.
        let max_cells = (4 * positions.len()).max(1) as f64;
        let mut cell = cell_m;
        while ((x1 - x0) / cell + 1.0) * ((y1 - y0) / cell + 1.0) > max_cells {
            cell *= 2.0;
        }
        let cols = ((x1 - x0) / cell) as usize + 1;
        let rows = ((y1 - y0) / cell) as usize + 1;
        let mut g = Grid {
            cell_m: cell,
            x0,
            y0,
            cols,
            rows,
            start: vec![0; cols * rows + 1],
            items: vec![0; positions.len()],
            at: vec![(0.0, 0.0); positions.len()],
        };
        // Counting sort by cell: nodes of a cell stay in index order.
        let cell_of: Vec<usize> = positions.iter().map(|&p| g.cell_of(p)).collect();
        for &c in &cell_of {
            g.start[c + 1] += 1;
        }
        for c in 0..cols * rows {
            g.start[c + 1] += g.start[c];
        }
        let mut fill = g.start.clone();
        for (i, &c) in cell_of.iter().enumerate() {
            g.items[fill[c] as usize] = i as u32;
            g.at[fill[c] as usize] = positions[i];
            fill[c] += 1;
        }
        g
    }

    fn clamp_col(&self, x: f64) -> usize {
        (((x - self.x0) / self.cell_m).floor().max(0.0) as usize).min(self.cols - 1)
    }

    fn clamp_row(&self, y: f64) -> usize {
        (((y - self.y0) / self.cell_m).floor().max(0.0) as usize).min(self.rows - 1)
    }

    fn cell_of(&self, (x, y): (f64, f64)) -> usize {
        self.clamp_row(y) * self.cols + self.clamp_col(x)
    }

    /// Calls `f` with every node whose cell overlaps the square of half-side `r` around
    /// `center` (a superset of the nodes within distance `r`), in increasing cell order, and
    /// with the position (m) the node had when the grid was filled.
    #[inline(always)]
    pub fn for_each_near(&self, center: (f64, f64), r: f64, mut f: impl FnMut(u32, (f64, f64))) {
        let (c0, c1) = (self.clamp_col(center.0 - r), self.clamp_col(center.0 + r));
        let (r0, r1) = (self.clamp_row(center.1 - r), self.clamp_row(center.1 + r));
        for row in r0..=r1 {
            // The cells of one row are contiguous in `items`.
            let (a, b) = (self.start[row * self.cols + c0], self.start[row * self.cols + c1 + 1]);
            let (a, b) = (a as usize, b as usize);
            for (&n, &p) in self.items[a..b].iter().zip(&self.at[a..b]) {
                f(n, p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_every_node_within_range(
            pts in proptest::collection::vec((-500.0f64..2000.0, -300.0f64..900.0), 1..120),
            cell in 10.0f64..600.0,
            q in 0usize..120,
            r in 0.0f64..800.0,
        ) {
            let g = Grid::new(&pts, cell);
            let c = pts[q % pts.len()];
            let mut near = Vec::new();
            g.for_each_near(c, r, |n, at| {
                near.push(n);
                // The position handed over is the node's own.
                assert_eq!(at, pts[n as usize]);
            });
            for (i, p) in pts.iter().enumerate() {
                let (dx, dy) = (p.0 - c.0, p.1 - c.1);
                let d = (dx * dx + dy * dy).sqrt();
                if d <= r {
                    prop_assert!(near.contains(&(i as u32)), "node {} at {} m missed", i, d);
                }
            }
            let mut dedup = near.clone();
            dedup.sort_unstable();
            dedup.dedup();
            prop_assert_eq!(dedup.len(), near.len(), "a node visited twice");
        }
    }
}
