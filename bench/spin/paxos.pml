/*
 * Single-decree Paxos with separate roles: 2 proposers (one attempt each,
 * ballots 1 and 2, values 1 and 2), K acceptors, one learner that asserts
 * agreement. It is the protocol of livecheck's systems/paxos with
 * --roles split --proposers 2 --nodes K+3 (livecheck's values are 100 and
 * 101; a value is only a label here).
 *
 * Process ids are livecheck's node ids: proposers 0 and 1, acceptors 2 to
 * K+1, the learner K+2. Each step of a process is one atomic block that does
 * what one livecheck handler does: a proposer's start, or the delivery of
 * one message. Temporaries are cleared at the end of each block.
 *
 * The network is livecheck's datagram transport: any message in flight may
 * be delivered next. Each pair of sender and receiver has its own channel,
 * and a receive names the kind of message (and ballot) it takes with a
 * random receive (??), so a message need not wait for one sent earlier on
 * the same channel. The learner's channels are filled with sorted sends
 * (!!), so that two orders of the same Accepted messages are one state, as
 * they are one multiset of messages in flight in livecheck.
 *
 * Messages:
 *   proposer p -> acceptor a: toAcc[p*K+a]  PREPARE(ballot) and ACCEPT(ballot, value)
 *   acceptor a -> proposer p: toProp[a*2+p] the promise: the proposal a last accepted (0, 0: none)
 *   acceptor a -> learner:    toLearn[a]    Accepted(ballot, value)
 *
 * Options: -DK=3 (acceptors, 1 to 5), -DQUORUM=q (quorum size; default a
 * majority of K, -DQUORUM=1 is livecheck's bug quorum=1), -DLAST_PROMISE
 * (livecheck's bug last-promise).
 *
 * Build: spin -DK=3 -a paxos.pml
 */

#ifndef K
#define K 3
#endif
#ifndef QUORUM
#define QUORUM (K / 2 + 1)
#endif
#define NP 2

mtype = { PREPARE, ACCEPT };

chan toAcc[NP * K] = [2] of { mtype, byte, byte };
chan toProp[K * NP] = [1] of { byte, byte };
chan toLearn[K] = [2] of { byte, byte };

/* A promise from acceptor a carrying its accepted proposal ab, av. */
inline promise() {
	if
	:: phase2 -> skip /* late: Accept is sent once */
	:: else ->
		promises = promises | (1 << a);
		npromises++;
#ifdef LAST_PROMISE
		adoptB = ab; adoptV = av;
#else
		if
		:: ab > adoptB -> adoptB = ab; adoptV = av
		:: else
		fi;
#endif
		if
		:: npromises >= QUORUM ->
			phase2 = true;
			if
			:: adoptB != 0 -> av = adoptV
			:: else -> av = value
			fi;
			for (a : 0 .. K - 1) {
				toAcc[_pid * K + a]!ACCEPT, ballot, av
			}
		:: else
		fi
	fi
}

/* Acceptor a accepted v under ballot b+1. Past a ballot's quorum a vote
 * changes nothing; a second quorum must carry the value chosen. */
inline vote() {
	if
	:: nvotes[b] >= QUORUM -> skip
	:: else ->
		votes[b] = votes[b] | (1 << a);
		nvotes[b]++;
		if
		:: nvotes[b] == QUORUM && chosen == 0 -> chosen = v
		:: nvotes[b] == QUORUM && chosen != 0 -> assert(v == chosen)
		:: else
		fi
	fi
}

active [NP] proctype Proposer()
{
	byte ballot = _pid + 1, value = _pid + 1;
	byte promises, npromises, adoptB, adoptV, a;
	bool phase2;
	byte ab, av;

	atomic {
		for (a : 0 .. K - 1) {
			toAcc[_pid * K + a]!PREPARE, ballot, 0
		}
		a = 0
	}
end:	do
#define PROMISE(x) \
	:: atomic { toProp[x * NP + _pid]?ab, av -> a = x; promise(); ab = 0; av = 0; a = 0 }
	PROMISE(0)
#if K > 1
	PROMISE(1)
#endif
#if K > 2
	PROMISE(2)
#endif
#if K > 3
	PROMISE(3)
#endif
#if K > 4
	PROMISE(4)
#endif
	od
}

active [K] proctype Acceptor()
{
	byte me = _pid - NP;
	byte promised, accB, accV;
	byte b, v;

end:	do
#define FROM(p) \
	:: atomic { toAcc[p * K + me]??PREPARE, b, v -> \
		if \
		:: b > promised -> promised = b; toProp[me * NP + p]!accB, accV \
		:: else \
		fi; \
		b = 0; v = 0 } \
	:: atomic { toAcc[p * K + me]??ACCEPT, b, v -> \
		if \
		:: b >= promised -> promised = b; accB = b; accV = v; toLearn[me]!!b, v \
		:: else \
		fi; \
		b = 0; v = 0 }
	FROM(0)
	FROM(1)
	od
}

active proctype Learner()
{
	byte votes[NP], nvotes[NP]; /* acceptors' Accepted per ballot: set and size */
	byte chosen, v, a, b;

end:	do
#define VOTE(x, bal) \
	:: atomic { toLearn[x]??eval(bal), v -> a = x; b = bal - 1; vote(); a = 0; b = 0; v = 0 }
	VOTE(0, 1) VOTE(0, 2)
#if K > 1
	VOTE(1, 1) VOTE(1, 2)
#endif
#if K > 2
	VOTE(2, 1) VOTE(2, 2)
#endif
#if K > 3
	VOTE(3, 1) VOTE(3, 2)
#endif
#if K > 4
	VOTE(4, 1) VOTE(4, 2)
#endif
	od
}
