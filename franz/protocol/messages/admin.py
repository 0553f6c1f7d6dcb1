"""Schemas of Topic, config, log-dir and producer-id administration.

Written down from Kafka's message JSON specs in the language of
franz/protocol/schema.py; versions start at Kafka 4.x's baseline (KIP-896).
"""

SCHEMAS = """\
CreateTopics key=19 versions=2-7 flex=5+
 request
    topics []
      name string
      num_partitions int32
      replication_factor int16
      assignments []
        partition_index int32
        broker_ids []int32
      configs []
        name string
        value string null
    timeout_ms int32 default=60000
    validate_only bool
 response
    throttle_time_ms int32
    topics []
      name string
      topic_id uuid 7+
      error_code int16
      error_message string null
      topic_config_error_code int16 5+ tag=0
      num_partitions int32 5+ default=-1
      replication_factor int16 5+ default=-1
      configs [] 5+ null
        name string 5+
        value string 5+ null
        read_only bool 5+
        config_source int8 5+ default=-1
        is_sensitive bool 5+

DeleteTopics key=20 versions=1-6 flex=4+
 request
    topics [] 6+
      name string 6+ null default=null
      topic_id uuid 6+
    topic_names []string 1-5
    timeout_ms int32
 response
    throttle_time_ms int32
    responses []
      name string null=6+
      topic_id uuid 6+
      error_code int16
      error_message string 5+ null default=null

CreatePartitions key=37 versions=0-3 flex=2+
 request
    topics []
      name string
      count int32
      assignments [] null
        broker_ids []int32
    timeout_ms int32
    validate_only bool
 response
    throttle_time_ms int32
    results []
      name string
      error_code int16
      error_message string null default=null

DescribeConfigs key=32 versions=1-4 flex=4+
 request
    resources []
      resource_type int8
      resource_name string
      configuration_keys []string null
    include_synonyms bool
    include_documentation bool 3+
 response
    throttle_time_ms int32
    results []
      error_code int16
      error_message string null
      resource_type int8
      resource_name string
      configs []
        name string
        value string null
        read_only bool
        config_source int8 default=-1
        is_sensitive bool
        synonyms []
          name string
          value string null
          source int8
        config_type int8 3+
        documentation string 3+ null

AlterConfigs key=33 versions=0-2 flex=2+
 request
    resources []
      resource_type int8
      resource_name string
      configs []
        name string
        value string null
    validate_only bool
 response
    throttle_time_ms int32
    responses []
      error_code int16
      error_message string null
      resource_type int8
      resource_name string

IncrementalAlterConfigs key=44 versions=0-1 flex=1+
 request
    resources []
      resource_type int8
      resource_name string
      configs []
        name string
        config_operation int8
        value string null
    validate_only bool
 response
    throttle_time_ms int32
    responses []
      error_code int16
      error_message string null
      resource_type int8
      resource_name string

DeleteRecords key=21 versions=0-2 flex=2+
 request
    topics []
      name string
      partitions []
        partition_index int32
        offset int64
    timeout_ms int32
 response
    throttle_time_ms int32
    topics []
      name string
      partitions []
        partition_index int32
        low_watermark int64
        error_code int16

InitProducerId key=22 versions=0-5 flex=2+
 request
    transactional_id string null
    transaction_timeout_ms int32
    producer_id int64 3+ default=-1
    producer_epoch int16 3+ default=-1
 response
    throttle_time_ms int32
    error_code int16
    producer_id int64 default=-1
    producer_epoch int16

DescribeCluster key=60 versions=0-2 flex=0+
 request
    include_cluster_authorized_operations bool
    endpoint_type int8 1+ default=1
    include_fenced_brokers bool 2+ default=false
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    endpoint_type int8 1+ default=1
    cluster_id string
    controller_id int32 default=-1
    brokers []
      broker_id int32
      host string
      port int32
      rack string null default=null
      is_fenced bool 2+ default=false
    cluster_authorized_operations int32 default=-2147483648

DescribeLogDirs key=35 versions=1-5 flex=2+
 request
    topics [] null
      topic string
      partitions []int32
 response
    throttle_time_ms int32
    error_code int16 3+
    results []
      error_code int16
      log_dir string
      topics []
        name string
        partitions []
          partition_index int32
          partition_size int64
          offset_lag int64
          is_future_key bool
      total_bytes int64 4+ default=-1
      usable_bytes int64 4+ default=-1
      is_cordoned bool 5+ default=false

SaslHandshake key=17 versions=0-1
 request
    mechanism string
 response
    error_code int16
    mechanisms []string

SaslAuthenticate key=36 versions=0-2 flex=2+
 request
    auth_bytes bytes
 response
    error_code int16
    error_message string null
    auth_bytes bytes
    session_lifetime_ms int64 1+

CreateDelegationToken key=38 versions=1-3 flex=2+
 request
    owner_principal_type string 3+ null
    owner_principal_name string 3+ null
    renewers []
      principal_type string
      principal_name string
    max_lifetime_ms int64
 response
    error_code int16
    principal_type string
    principal_name string
    token_requester_principal_type string 3+
    token_requester_principal_name string 3+
    issue_timestamp_ms int64
    expiry_timestamp_ms int64
    max_timestamp_ms int64
    token_id string
    hmac bytes
    throttle_time_ms int32

RenewDelegationToken key=39 versions=1-2 flex=2+
 request
    hmac bytes
    renew_period_ms int64
 response
    error_code int16
    expiry_timestamp_ms int64
    throttle_time_ms int32

ExpireDelegationToken key=40 versions=1-2 flex=2+
 request
    hmac bytes
    expiry_time_period_ms int64
 response
    error_code int16
    expiry_timestamp_ms int64
    throttle_time_ms int32

DescribeDelegationToken key=41 versions=1-3 flex=2+
 request
    owners [] null
      principal_type string
      principal_name string
 response
    error_code int16
    tokens []
      principal_type string
      principal_name string
      token_requester_principal_type string 3+
      token_requester_principal_name string 3+
      issue_timestamp int64
      expiry_timestamp int64
      max_timestamp int64
      token_id string
      hmac bytes
      renewers []
        principal_type string
        principal_name string
    throttle_time_ms int32

DescribeAcls key=29 versions=1-3 flex=2+
 request
    resource_type_filter int8
    resource_name_filter string null
    pattern_type_filter int8 default=3
    principal_filter string null
    host_filter string null
    operation int8
    permission_type int8
 response
    throttle_time_ms int32
    error_code int16
    error_message string null
    resources []
      resource_type int8
      resource_name string
      pattern_type int8 default=3
      acls []
        principal string
        host string
        operation int8
        permission_type int8

CreateAcls key=30 versions=1-3 flex=2+
 request
    creations []
      resource_type int8
      resource_name string
      resource_pattern_type int8 default=3
      principal string
      host string
      operation int8
      permission_type int8
 response
    throttle_time_ms int32
    results []
      error_code int16
      error_message string null

DeleteAcls key=31 versions=1-3 flex=2+
 request
    filters []
      resource_type_filter int8
      resource_name_filter string null
      pattern_type_filter int8 default=3
      principal_filter string null
      host_filter string null
      operation int8
      permission_type int8
 response
    throttle_time_ms int32
    filter_results []
      error_code int16
      error_message string null default=null
      matching_acls []
        error_code int16
        error_message string null default=null
        resource_type int8
        resource_name string
        pattern_type int8 default=3
        principal string
        host string
        operation int8
        permission_type int8

ElectLeaders key=43 versions=0-2 flex=2+
 request
    election_type int8 1+
    topic_partitions [] null
      topic string
      partitions []int32
    timeout_ms int32 default=60000
 response
    throttle_time_ms int32
    error_code int16 1+
    replica_election_results []
      topic string
      partition_result []
        partition_id int32
        error_code int16
        error_message string null

AlterPartitionReassignments key=45 versions=0-1 flex=0+
 request
    timeout_ms int32 default=60000
    allow_replication_factor_change bool 1+ default=true
    topics []
      name string
      partitions []
        partition_index int32
        replicas []int32 null default=null
 response
    throttle_time_ms int32
    allow_replication_factor_change bool 1+ default=true
    error_code int16
    error_message string null
    responses []
      name string
      partitions []
        partition_index int32
        error_code int16
        error_message string null

AlterReplicaLogDirs key=34 versions=1-2 flex=2+
 request
    dirs []
      path string
      topics []
        name string
        partitions []int32
 response
    throttle_time_ms int32
    results []
      topic_name string
      partitions []
        partition_index int32
        error_code int16

UpdateFeatures key=57 versions=0-2 flex=0+
 request
    timeout_ms int32 default=60000
    feature_updates []
      feature string
      max_version_level int16
      allow_downgrade bool 0-0
      upgrade_type int8 1+ default=1
    validate_only bool 1+
 response
    throttle_time_ms int32
    error_code int16
    error_message string null
    results [] 0-1
      feature string
      error_code int16
      error_message string null

UnregisterBroker key=64 versions=0 flex=0+
 request
    broker_id int32
 response
    throttle_time_ms int32
    error_code int16
    error_message string null

ListConfigResources key=74 versions=0-1 flex=0+
 request
    resource_types []int8 1+
 response
    throttle_time_ms int32
    error_code int16
    config_resources []
      resource_name string
      resource_type int8 1+ default=16

ListPartitionReassignments key=46 versions=0-0 flex=0+
 request
    timeout_ms int32 default=60000
    topics [] null default=null
      name string
      partition_indexes []int32
 response
    throttle_time_ms int32
    error_code int16
    error_message string null
    topics []
      name string
      partitions []
        partition_index int32
        replicas []int32
        adding_replicas []int32
        removing_replicas []int32

DescribeClientQuotas key=48 versions=0-1 flex=1+
 request
    components []
      entity_type string
      match_type int8
      match string null
    strict bool
 response
    throttle_time_ms int32
    error_code int16
    error_message string null
    entries [] null
      entity []
        entity_type string
        entity_name string null
      values []
        key string
        value float64

AlterClientQuotas key=49 versions=0-1 flex=1+
 request
    entries []
      entity []
        entity_type string
        entity_name string null
      ops []
        key string
        value float64
        remove bool
    validate_only bool
 response
    throttle_time_ms int32
    entries []
      error_code int16
      error_message string null
      entity []
        entity_type string
        entity_name string null

DescribeUserScramCredentials key=50 versions=0-0 flex=0+
 request
    users [] null
      name string
 response
    throttle_time_ms int32
    error_code int16
    error_message string null
    results []
      user string
      error_code int16
      error_message string null
      credential_infos []
        mechanism int8
        iterations int32

AlterUserScramCredentials key=51 versions=0-0 flex=0+
 request
    deletions []
      name string
      mechanism int8
    upsertions []
      name string
      mechanism int8
      iterations int32
      salt bytes
      salted_password bytes
 response
    throttle_time_ms int32
    results []
      user string
      error_code int16
      error_message string null

DescribeProducers key=61 versions=0-0 flex=0+
 request
    topics []
      name string
      partition_indexes []int32
 response
    throttle_time_ms int32
    topics []
      name string
      partitions []
        partition_index int32
        error_code int16
        error_message string null default=null
        active_producers []
          producer_id int64
          producer_epoch int32
          last_sequence int32 default=-1
          last_timestamp int64 default=-1
          coordinator_epoch int32
          current_txn_start_offset int64 default=-1
"""
