% inputs: meet/part/ring/flip/flop(A,B) (ids A, B), enter(P) (a person P)
initiatedAt(near(A,B)=true, T) :- happensAt(meet(A,B), T).
terminatedAt(near(A,B)=true, T) :- happensAt(part(A,B), T).
% near(A,B) is admitted for A @< B with B a person: near(a,b) from enter(b) at 50 on (in one
% window over the stream: from the start), near(c,d) never (d never enters), near(b,a) never

% a1: holdsFor of a grounded simple fluent, bound
holdsFor(far(A,B)=true, I) :-
    holdsFor(near(A,B)=true, I1),
    complement_all([I1], I).
% a2: start/end of it
initiatedAt(met(A,B)=true, T) :- happensAt(start(near(A,B)=true), T).
initiatedAt(left(A,B)=true, T) :- happensAt(end(near(A,B)=true), T).
% a3: holdsAt and \+ holdsAt of it
initiatedAt(rang(A,B)=true, T) :- happensAt(ring(A,B), T), holdsAt(near(A,B)=true, T).
initiatedAt(lone(A,B)=true, T) :- happensAt(ring(A,B), T), \+ holdsAt(near(A,B)=true, T).
% a4: holdsFor with a free argument
holdsFor(anynear(A)=true, I) :- holdsFor(near(A,_)=true, I).
% a5: a grounded derived event read with arguments its grounding does not admit
initiatedAt(up(A)=true, T) :- happensAt(meet(A,_), T).
happensAt(yo(A,B), T) :- happensAt(start(up(A)=true), T), id(B).
initiatedAt(yoed(A,B)=true, T) :- happensAt(yo(B,A), T).
% a6: a cycle (on, off) reading an instance its grounding does not admit: RTEC's holdsAtCyclic
% derives it by its rules (off(b,a) holds from 31, so flip(a,b) at 35 does not initiate on(a,b))
initiatedAt(on(A,B)=true, T) :- happensAt(flip(A,B), T), \+ holdsAt(off(B,A)=true, T).
initiatedAt(off(A,B)=true, T) :- happensAt(flop(A,B), T), \+ holdsAt(on(A,B)=true, T).

dynamicDomain(id(_)).
dynamicDomain(person(_)).
grounding(meet(A,B)) :- id(A), id(B).
grounding(part(A,B)) :- id(A), id(B).
grounding(ring(A,B)) :- id(A), id(B).
grounding(flip(A,B)) :- id(A), id(B).
grounding(flop(A,B)) :- id(A), id(B).
grounding(enter(P)) :- person(P).
grounding(near(A,B)=true) :- id(A), person(B), A @< B.
grounding(far(A,B)=true) :- id(A), id(B), A @< B.
grounding(met(A,B)=true) :- id(A), id(B).
grounding(left(A,B)=true) :- id(A), id(B).
grounding(rang(A,B)=true) :- id(A), id(B).
grounding(lone(A,B)=true) :- id(A), id(B).
grounding(anynear(A)=true) :- id(A).
grounding(up(A)=true) :- id(A).
grounding(yo(A,B)) :- id(A), id(B), A @< B.
grounding(yoed(A,B)=true) :- id(A), id(B).
grounding(on(A,B)=true) :- id(A), id(B).
grounding(off(A,B)=true) :- id(A), id(B), A @< B.
