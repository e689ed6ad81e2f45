fn main() { print!("{}", mysqlleader::install_sql()); }
