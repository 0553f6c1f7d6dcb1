// KafkaJS (a Kafka client written from the protocol in JavaScript, sharing no code with librdkafka
// or the Java client) against a broker: node kafkajs_driver.js SCENARIO BOOTSTRAP TOPIC [ARGS...].
// Prints one JSON line of what it saw; exits 1 with the error on any failure. Every wait is bounded.
'use strict'
const { Kafka, CompressionCodecs, CompressionTypes, logLevel } = require('kafkajs')
// Snappy comes as a plugin (xerial-framed, as Java's snappy-java writes it, from pure JavaScript)
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')
const CODECS = { gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy, none: CompressionTypes.None }

const [scenario, bootstrap, topic, ...args] = process.argv.slice(2)
const DEADLINE_MS = 30000

// KAFKAJS_CA: a CA file to trust, over TLS
const tls = process.env.KAFKAJS_CA ? { ssl: { ca: [require('fs').readFileSync(process.env.KAFKAJS_CA)] } } : {}

function client(extra = {}) {
  return new Kafka({ clientId: 'kafkajs-driver', brokers: [bootstrap], logLevel: logLevel.NOTHING,
    retry: { retries: 8 }, ...tls, ...extra })
}

// Resolves once `count` records were handed to eachMessage (or rejects at the deadline).
function consumeUntil(consumer, count, seen) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${seen.length} of ${count} records`)), DEADLINE_MS)
    consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ partition, offset: message.offset, key: message.key && message.key.toString(),
          value: message.value.toString(), headers: Object.fromEntries(
            Object.entries(message.headers).map(([k, v]) => [k, v.toString()])) })
        if (seen.length >= count) { clearTimeout(timer); resolve() }
      }
    }).catch(reject)
  })
}

const scenarios = {
  // Topics through the admin client: create with configs, describe, alter, grow, offsets, delete.
  async admin() {
    const admin = client().admin()
    await admin.connect()
    try {
      const created = await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2,
        configEntries: [{ name: 'retention.ms', value: '3600000' }] }] })
      const again = await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
      const described = await admin.describeConfigs({ includeSynonyms: false,
        resources: [{ type: 2, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }] })
      await admin.alterConfigs({ resources: [{ type: 2, name: topic,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] })
      const altered = await admin.describeConfigs({ includeSynonyms: false,
        resources: [{ type: 2, name: topic, configNames: ['cleanup.policy', 'retention.ms'] }] })
      await admin.createPartitions({ topicPartitions: [{ topic, count: 4 }] })
      const grown = await admin.fetchTopicMetadata({ topics: [topic] })
      const offsets = await admin.fetchTopicOffsets(topic)
      const listed = await admin.listTopics()
      const cluster = await admin.describeCluster()
      await admin.deleteTopics({ topics: [topic] })
      const after = await admin.listTopics()
      const configs = (answer) => Object.fromEntries(answer.resources[0].configEntries.map(
        (entry) => [entry.configName, [entry.configValue, entry.isDefault]]))
      return { created, again, partitions: metadata.topics[0].partitions.length,
        leaders: metadata.topics[0].partitions.map((p) => p.leader), described: configs(described),
        altered: configs(altered), grown: grown.topics[0].partitions.length,
        offsets: offsets.map((o) => [o.partition, o.low, o.high]), listed: listed.includes(topic),
        brokers: cluster.brokers.map((b) => [b.nodeId, b.host, b.port]), controller: cluster.controller,
        deleted: !after.includes(topic) }
    } finally {
      await admin.disconnect()
    }
  },

  // COUNT keyed records with a header, in CODEC (gzip, snappy, none), idempotent: where each landed.
  async produce() {
    const count = Number(args[0])
    const compression = CODECS[args[1]]
    const producer = client().producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      const placed = []
      for (let start = 0; start < count; start += 50) {
        const messages = []
        for (let i = start; i < Math.min(count, start + 50); i++) {
          messages.push({ key: `k${i % 10}`, value: `v${i}`, headers: { index: String(i) } })
        }
        const metadata = await producer.send({ topic, acks: -1, compression, messages })
        placed.push(...metadata.map((m) => [m.partition, m.baseOffset, m.errorCode]))
      }
      return { placed }
    } finally {
      await producer.disconnect()
    }
  },

  // Two members of one group read COUNT records; the group's state and commits afterwards.
  async group() {
    const count = Number(args[0])
    const groupId = `${topic}-group`
    const seen = []
    const consumers = [0, 1].map(() => client().consumer({ groupId, sessionTimeout: 10000,
      heartbeatInterval: 500, rebalanceTimeout: 10000, maxWaitTimeInMs: 500 }))
    const admin = client().admin()
    await admin.connect()
    try {
      for (const consumer of consumers) {
        await consumer.connect()
        await consumer.subscribe({ topics: [topic], fromBeginning: true })
      }
      // both members joined before any reads: the second join rebalances the first
      const joined = consumers.map((c) => new Promise((resolve) => c.on(c.events.GROUP_JOIN, resolve)))
      const reads = consumers.map((c) => consumeUntil(c, count, seen))
      await Promise.race([Promise.all(joined), new Promise((resolve) => setTimeout(resolve, DEADLINE_MS))])
      await Promise.race([Promise.any(reads), new Promise((resolve, reject) => setTimeout(
        () => seen.length >= count ? resolve() : reject(new Error(`read ${seen.length} of ${count}`)), DEADLINE_MS))])
      const described = await admin.describeGroups([groupId])
      for (const consumer of consumers) await consumer.stop()
      for (const consumer of consumers) await consumer.disconnect()
      const committed = await admin.fetchOffsets({ groupId, topics: [topic] })
      await admin.resetOffsets({ groupId, topic, earliest: true })
      const reset = await admin.fetchOffsets({ groupId, topics: [topic] })
      const groups = await admin.listGroups()
      await admin.deleteGroups([groupId])
      const left = await admin.listGroups()
      return { seen, members: described.groups[0].members.length, state: described.groups[0].state,
        committed: committed[0].partitions.map((p) => [p.partition, p.offset]),
        reset: reset[0].partitions.map((p) => [p.partition, p.offset]),
        listed: groups.groups.some((g) => g.groupId === groupId),
        deleted: !left.groups.some((g) => g.groupId === groupId) }
    } finally {
      await admin.disconnect()
    }
  },

  // One transaction committed, one aborted; what a read_committed consumer of KafkaJS then reads.
  async transactions() {
    const producer = client().producer({ transactionalId: `${topic}-tx`, idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    try {
      for (const [outcome, prefix] of [['commit', 'kept'], ['abort', 'dropped'], ['commit', 'also-kept']]) {
        const transaction = await producer.transaction()
        await transaction.send({ topic, messages: [0, 1, 2, 3, 4].map((i) => ({ value: `${prefix}-${i}` })) })
        await transaction[outcome]()
      }
    } finally {
      await producer.disconnect()
    }
    const consumer = client().consumer({ groupId: `${topic}-reader`, maxWaitTimeInMs: 500 })
    await consumer.connect()
    const seen = []
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true })
      await consumeUntil(consumer, 10, seen)
      await new Promise((resolve) => setTimeout(resolve, 1000))  // nothing more is to come
    } finally {
      await consumer.disconnect()
    }
    return { values: seen.map((record) => record.value) }
  },

  // Records deleted below a point (DeleteRecords), then a new group reading from the beginning
  // starts at the log start; a seek to a deleted offset lands there too; pause and resume.
  async truncated() {
    const [count, below] = args.map(Number)
    const producer = client().producer()
    const admin = client().admin()
    await producer.connect()
    await admin.connect()
    try {
      await producer.send({ topic, messages: Array.from({ length: count }, (_, i) => ({ value: `t${i}` })) })
      await admin.fetchTopicOffsets(topic)  // the admin client learns the topic's leaders
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(below) }] })
      const offsets = await admin.fetchTopicOffsets(topic)
      const seen = []
      const consumer = client().consumer({ groupId: `${topic}-from-start`, maxWaitTimeInMs: 500 })
      await consumer.connect()
      await consumer.subscribe({ topics: [topic], fromBeginning: true })
      await consumeUntil(consumer, count - below, seen)
      consumer.pause([{ topic }])
      const paused = consumer.paused()
      consumer.resume([{ topic }])
      consumer.seek({ topic, partition: 0, offset: '0' })  // below the log start: reset to it
      const again = []
      await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`re-read ${again.length}`)), DEADLINE_MS)
        const before = seen.length
        const poll = setInterval(() => {
          if (seen.length >= before + count - below) { clearInterval(poll); clearTimeout(timer); resolve() }
        }, 50)
      })
      again.push(...seen.slice(count - below))
      await consumer.disconnect()
      return { low: offsets[0].low, high: offsets[0].high, first: seen[0].offset,
        values: seen.slice(0, count - below).map((r) => r.value), paused: paused.map((p) => p.topic),
        reread: again.map((r) => r.offset) }
    } finally {
      await producer.disconnect()
      await admin.disconnect()
    }
  },

  // SASL/SCRAM-SHA-512 with USER and PASSWORD: a produce and a metadata request, or the error.
  async scram() {
    const [user, password] = args
    const kafka = client({ sasl: { mechanism: 'scram-sha-512', username: user, password },
      retry: { retries: 0 } })
    const producer = kafka.producer()
    try {
      await producer.connect()
      await producer.send({ topic, messages: [{ value: 'over-scram' }] })
      return { sent: true }
    } catch (error) {
      return { sent: false, error: error.name, message: error.message }
    } finally {
      await producer.disconnect()
    }
  },
}

const run = scenarios[scenario]
if (run === undefined) {
  console.error(`unknown scenario ${scenario}`)
  process.exit(2)
}
run().then((result) => {
  console.log(JSON.stringify(result))
  process.exit(0)
}, (error) => {
  console.error(error && error.stack ? error.stack : String(error))
  process.exit(1)
})
