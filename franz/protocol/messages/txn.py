"""Schemas of The transaction coordinator's APIs.

Written down from Kafka's message JSON specs in the language of
franz/protocol/schema.py; versions start at Kafka 4.x's baseline (KIP-896).
"""

SCHEMAS = """\
AddPartitionsToTxn key=24 versions=0-5 flex=3+
 request
    transactions [] 4+
      transactional_id string 4+
      producer_id int64 4+
      producer_epoch int16 4+
      verify_only bool 4+ default=false
      topics [] 4+
        name string
        partitions []int32
    v3_and_below_transactional_id string 0-3
    v3_and_below_producer_id int64 0-3
    v3_and_below_producer_epoch int16 0-3
    v3_and_below_topics [] 0-3
      name string
      partitions []int32
 response
    throttle_time_ms int32
    error_code int16 4+
    results_by_transaction [] 4+
      transactional_id string 4+
      topic_results [] 4+
        name string
        results_by_partition []
          partition_index int32
          partition_error_code int16
    results_by_topic_v3_and_below [] 0-3
      name string
      results_by_partition []
        partition_index int32
        partition_error_code int16

AddOffsetsToTxn key=25 versions=0-4 flex=3+
 request
    transactional_id string
    producer_id int64
    producer_epoch int16
    group_id string
 response
    throttle_time_ms int32
    error_code int16

EndTxn key=26 versions=0-5 flex=3+
 request
    transactional_id string
    producer_id int64
    producer_epoch int16
    committed bool
 response
    throttle_time_ms int32
    error_code int16
    producer_id int64 5+ default=-1
    producer_epoch int16 5+ default=-1

WriteTxnMarkers key=27 versions=1-2 flex=1+
 request
    markers []
      producer_id int64
      producer_epoch int16
      transaction_result bool
      topics []
        name string
        partition_indexes []int32
      coordinator_epoch int32
      transaction_version int8 2+ default=0
 response
    markers []
      producer_id int64
      topics []
        name string
        partitions []
          partition_index int32
          error_code int16

TxnOffsetCommit key=28 versions=0-5 flex=3+
 request
    transactional_id string
    group_id string
    producer_id int64
    producer_epoch int16
    generation_id int32 3+ default=-1
    member_id string 3+
    group_instance_id string 3+ null default=null
    topics []
      name string
      partitions []
        partition_index int32
        committed_offset int64
        committed_leader_epoch int32 2+ default=-1
        committed_metadata string null
 response
    throttle_time_ms int32
    topics []
      name string
      partitions []
        partition_index int32
        error_code int16

DescribeTransactions key=65 versions=0-0 flex=0+
 request
    transactional_ids []string
 response
    throttle_time_ms int32
    transaction_states []
      error_code int16
      transactional_id string
      transaction_state string
      transaction_timeout_ms int32
      transaction_start_time_ms int64
      producer_id int64
      producer_epoch int16
      topics []
        topic string
        partitions []int32

ListTransactions key=66 versions=0-2 flex=0+
 request
    state_filters []string
    producer_id_filters []int64
    duration_filter int64 1+ default=-1
    transactional_id_pattern string 2+ null default=null
 response
    throttle_time_ms int32
    error_code int16
    unknown_state_filters []string
    transaction_states []
      transactional_id string
      producer_id int64
      transaction_state string
"""
