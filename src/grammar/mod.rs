//! The grammars of option values that the command line and the fuzz targets share: durations,
//! `--status` ranges, `--header`s, `--matches`/`--contains` and `--expect-header`/`--json-field`.

pub mod duration;
pub mod expect;
pub mod header;
pub mod matcher;
pub mod status;
