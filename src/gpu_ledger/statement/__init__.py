"""A team's monthly chargeback statement, as a finance partner sends it: `content` reads it from the
published marts, `chart` draws its bar chart, and `pdf` and `html` write it (docs/statement.md)."""
