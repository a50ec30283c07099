//! A small columnar table: what the engine hands to Python (and on to Parquet/CSV).

#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn push(&mut self, name: &str, col: Column) -> &mut Self {
        self.columns.push((name.to_string(), col));
        self
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| match c {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        })
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    /// CSV text (for the Rust-only tests and the determinism check).
    pub fn to_csv(&self) -> String {
        let mut out = self.columns.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(",");
        out.push('\n');
        for i in 0..self.rows() {
            let row: Vec<String> = self
                .columns
                .iter()
                .map(|(_, c)| match c {
                    Column::U64(v) => v[i].to_string(),
                    Column::F64(v) => format!("{:?}", v[i]),
                    Column::Str(v) => v[i].clone(),
                })
                .collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }
}
