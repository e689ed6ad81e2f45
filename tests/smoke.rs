use crate::common;
use std::time::Duration;

#[tokio::test]
async fn campaign_elects_the_first_node() {
    let db = common::TestDb::migrated("smoke").await;
    let a = mysqlleader::procedures::campaign(&db.pool, "billing", "web-3:4121", Duration::from_secs(10)).await.unwrap();
    assert!(a.is_leader);
    assert_eq!(a.term, 1);
    let b = mysqlleader::procedures::campaign(&db.pool, "billing", "web-4", Duration::from_secs(10)).await.unwrap();
    assert!(!b.is_leader);
    assert_eq!(b.leader_id.as_deref(), Some("web-3:4121"));
    assert!(mysqlleader::migrate(&db.pool).await.unwrap().is_empty(), "second migrate applies nothing");
    db.drop_db().await;
}
