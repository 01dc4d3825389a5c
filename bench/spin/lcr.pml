/*
 * LeLann-Chang-Roberts leader election on a unidirectional ring of N nodes,
 * the protocol of livecheck's systems/lcr with its default ids: node 0 has
 * id N, node i > 0 has id i, so the largest id travels the whole ring.
 *
 * Each node is one process; each step of a process is one atomic block that
 * does what one livecheck handler does (the driver's start, or the delivery
 * of one message), so that a Spin transition and a livecheck step are the
 * same unit. Messages travel on one FIFO channel per node, its inbox, as on
 * livecheck's stream transport (node i receives only from node i-1).
 * Temporaries are cleared at the end of each block: they would otherwise
 * tell apart states that livecheck counts as one.
 *
 * Safety, as livecheck's one-leader: at most one node elects itself, and
 * every node that learns a leader learns the same one.
 *
 * -DNO_DISCARD injects livecheck's bug no-discard (forward every id but
 * one's own): several leaders, an assertion violation.
 *
 * Build: spin -DN=5 -a lcr.pml
 */

#ifndef N
#define N 5
#endif

mtype = { ELECT, LEADER };

/* An inbox holds at most the N ids and the announcement. */
chan ring[N] = [N+1] of { mtype, byte };

byte leaders;     /* nodes that elected themselves */
byte knownLeader; /* the leader's id once some node knows it, 0 before */

active [N] proctype Node()
{
	byte id = (_pid == 0 -> N : _pid);
	bool started, leader, done;
	byte known, m;
	/* Only this node receives from in and sends to out: declared, so
	 * that partial-order reduction may treat its channel steps as safe. */
	chan in = ring[_pid], out = ring[(_pid + 1) % N];
	xr in;
	xs out;

end:	do
	:: atomic { !started ->
		started = true;
		out!ELECT, id
	   }
	:: atomic { in?ELECT, m ->
		if
		:: m == id ->
			leader = true;
			known = id;
			leaders++;
			assert(leaders == 1);
			assert(knownLeader == 0 || knownLeader == id);
			knownLeader = id;
			out!LEADER, id
#ifdef NO_DISCARD
		:: m != id ->
#else
		:: m > id ->
#endif
			out!ELECT, m
		:: else
		fi;
		m = 0
	   }
	:: atomic { in?LEADER, m ->
		if
		:: m == id ->
			done = true
		:: else ->
			known = m;
			assert(knownLeader == 0 || knownLeader == m);
			knownLeader = m;
			out!LEADER, m
		fi;
		m = 0
	   }
	od
}
